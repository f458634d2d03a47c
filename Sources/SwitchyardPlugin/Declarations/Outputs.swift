public import SwitchyardProtocol

/// What a route factory can return: a ``Screen``, one of this plugin's coordinators, or a ``PluginCoordinator``
/// (another plugin's coordinator).
@MainActor
public protocol RouteOutput {
    /// The wire content, and the side effects of handing this output to the host (a local child coordinator is
    /// kept until the host creates its instance).
    func routeContent(_ context: OutputContext) throws -> RouteContent
}

/// Where an output is being produced (the parent instance and the route), for adopting local child coordinators.
@MainActor
public struct OutputContext {
    let core: PluginCore?
    let parent: InstanceID?
    let route: String
}

/// A screen: a name the UI shell maps to a view, and its properties.
public struct Screen: RouteOutput, Sendable, Equatable {
    /// What the UI shell looks the view up by. The host never interprets it; prefix it with the plugin's domain
    /// (`OrdersItem`) so two plugins' screens cannot collide in one shell.
    public var name: String
    /// The view's data, as JSON: it is stored in the tree (and the state file), so give the view what it needs to
    /// show itself, ids rather than whole records.
    public var props: JSONValue?
    /// The navigation bar's title (§21); nil: the shell's choice.
    public var title: String?
    /// What a shell that renders screens as data draws (§21): the elements top to bottom, as JSON. Built with
    /// ``init(_:title:_:content:)``; nil: a shell draws the screen from its name and props.
    public var content: JSONValue?

    /// A screen with properties given as an object literal: `Screen("Todo", ["id": .string(id)])`.
    public init(_ name: String, _ props: JSONObject = [:]) {
        self.name = name
        self.props = props.isEmpty ? nil : .object(props)
    }

    /// A screen whose properties are any JSON value, or none.
    public init(_ name: String, props: JSONValue?) {
        self.name = name
        self.props = props
    }

    /// A screen goes to the host as it is.
    public func routeContent(_ context: OutputContext) -> RouteContent {
        .screen(ScreenDescriptor(name: name, props: props, title: title, content: content))
    }
}

/// Another plugin's coordinator, with the params its plugin creates it with. The route declares which type it opens
/// (`target:`), so the host can check the answer and validate deep links statically.
public struct PluginCoordinator: RouteOutput, Sendable, Equatable {
    /// What the other plugin's coordinator is created with (its ``CreationContext/params``): the contract between
    /// the two plugins, so keep it to ids and options.
    public var params: JSONValue?

    /// Opens the route's target with `params` (none by default).
    public init(params: JSONValue? = nil) { self.params = params }
    /// Opens the route's target with params given as an object literal: `PluginCoordinator(["id": .string(id)])`.
    public init(_ params: JSONObject) { self.params = .object(params) }

    /// The route's declared target with these params; fails if the route declares no `target:`, since the host
    /// could not have checked where it leads.
    public func routeContent(_ context: OutputContext) throws -> RouteContent {
        guard let target = context.core?.target(of: context.route, parent: context.parent) else {
            throw ResponseError(
                .internalError, "route '\(context.route)' returns a PluginCoordinator but declares no target")
        }
        return .coordinator(target, params: params)
    }
}

/// A reference to another plugin's coordinator type, for `@Route(…, target:)`.
public struct PluginTarget: Sendable, Equatable {
    /// The plugin's name in the manifest (not its executable's name).
    public let plugin: String
    /// The coordinator type, as that plugin declares it.
    public let type: String
    /// The params the route's ``PluginCoordinator`` creates it with, declared (the route table's `targetParams`):
    /// the other plugin's composition checks them against what its type takes, before anything runs. Nil: not
    /// declared.
    public let params: [ParamDeclaration]?

    /// `.coordinator("project", in: "projects")`: reads as the route declaration it is part of.
    public static func coordinator(_ type: String, in plugin: String) -> PluginTarget {
        PluginTarget(plugin: plugin, type: type, params: nil)
    }

    /// `.coordinator("project", in: "projects", params: [ParamDeclaration(name: "id", type: .string)])`: the target
    /// and what the route passes it.
    public static func coordinator(_ type: String, in plugin: String, params: [ParamDeclaration]) -> PluginTarget {
        PluginTarget(plugin: plugin, type: type, params: params)
    }

    var reference: CoordinatorReference { CoordinatorReference(plugin: plugin, type: type) }
}

/// Thrown by a route factory, it rejects the route like a guard: the host answers `-32013 rejectedByGuard` and the
/// tree stays exactly as it was.
///
/// A rejection with `deferUntil` is a "not yet" (Protocol/README.md §13.5): a deep link opened with `defer` waits
/// until the condition holds, then is applied; `redirect` is what to show meanwhile (a sign-in), steps the host
/// applies once from this coordinator. Any other request fails as with a plain rejection.
public struct Rejection: Error, Sendable, CustomStringConvertible {
    /// Why: the message of the error the navigation fails with, shown to whoever asked (a user, a script, a log).
    public let reason: String
    /// What a deferred deep link waits for, and what to show meanwhile; nil for a plain rejection.
    public let deferral: LinkDeferral?
    /// A rejection with the reason the caller will see.
    public init(_ reason: String) {
        self.reason = reason
        self.deferral = nil
    }
    /// "Not yet": a deferred deep link waits `until` the condition holds (`.root("authenticated")`), with
    /// `redirect` shown meanwhile (`[.popToRoot]`).
    public init(_ reason: String, deferUntil until: DeferCondition, redirect: [NavigationStep] = []) {
        self.reason = reason
        self.deferral = LinkDeferral(until: until, redirect: redirect.isEmpty ? nil : redirect)
    }
    /// The reason, so a rejection prints as what it says.
    public var description: String { reason }

    /// The refusal's `data`: the route refused, and the deferral when there is one.
    func data(route: String) -> JSONValue {
        var data: JSONObject = ["route": .string(route)]
        if let deferral { data["defer"] = deferral.json }
        return .object(data)
    }
}

/// The input of a route that takes none.
public struct NoInput: Codable, Sendable, Equatable {
    /// The one value; chains pass it for routes whose factory takes no parameter.
    public init() {}
}

/// A single-value route input (`route(to: \.todo, "42")`), sent as one named param.
///
/// The param's name is the route's `param:`, else its deep-link pattern's first capture (`todo/:id` → `id`), else
/// `value`; its declared type comes from here, so the host checks it and converts deep-link captures to it.
public protocol RouteParameter: Codable, Sendable {
    /// The JSON type declared in the route table for this input.
    static var paramType: ParamType { get }
}

extension String: RouteParameter {
    /// `string`.
    public static var paramType: ParamType { .string }
}
extension Int: RouteParameter {
    /// `integer`: the host turns the capture `42` into 42 and refuses `abc`.
    public static var paramType: ParamType { .integer }
}
extension Int64: RouteParameter {
    /// `integer`.
    public static var paramType: ParamType { .integer }
}
extension Double: RouteParameter {
    /// `number`.
    public static var paramType: ParamType { .number }
}
extension Bool: RouteParameter {
    /// `boolean`.
    public static var paramType: ParamType { .boolean }
}
