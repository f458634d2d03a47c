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
    public var name: String
    public var props: JSONValue?

    public init(_ name: String, _ props: JSONObject = [:]) {
        self.name = name
        self.props = props.isEmpty ? nil : .object(props)
    }

    public init(_ name: String, props: JSONValue?) {
        self.name = name
        self.props = props
    }

    public func routeContent(_ context: OutputContext) -> RouteContent {
        .screen(ScreenDescriptor(name: name, props: props))
    }
}

/// Another plugin's coordinator, with the params its plugin creates it with. The route declares which type it opens
/// (`target:`), so the host can check the answer and validate deep links statically.
public struct PluginCoordinator: RouteOutput, Sendable, Equatable {
    public var params: JSONValue?

    public init(params: JSONValue? = nil) { self.params = params }
    public init(_ params: JSONObject) { self.params = .object(params) }

    public func routeContent(_ context: OutputContext) throws -> RouteContent {
        guard let target = context.core?.target(of: context.route, parent: context.parent) else {
            throw ResponseError(.internalError, "route '\(context.route)' returns a PluginCoordinator but declares no target")
        }
        return .coordinator(target, params: params)
    }
}

/// A reference to another plugin's coordinator type, for `@Route(…, target:)`.
public struct PluginTarget: Sendable, Equatable {
    public let plugin: String
    public let type: String

    public static func coordinator(_ type: String, in plugin: String) -> PluginTarget {
        PluginTarget(plugin: plugin, type: type)
    }

    var reference: CoordinatorReference { CoordinatorReference(plugin: plugin, type: type) }
}

/// Thrown by a route factory, it rejects the route like a guard: the host answers `-32013 rejectedByGuard` and the
/// tree stays exactly as it was.
public struct Rejection: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// The input of a route that takes none.
public struct NoInput: Codable, Sendable, Equatable {
    public init() {}
}

/// A single-value route input (`route(to: \.todo, "42")`), sent as one named param.
public protocol RouteParameter: Codable, Sendable {
    static var paramType: ParamType { get }
}

extension String: RouteParameter { public static var paramType: ParamType { .string } }
extension Int: RouteParameter { public static var paramType: ParamType { .integer } }
extension Int64: RouteParameter { public static var paramType: ParamType { .integer } }
extension Double: RouteParameter { public static var paramType: ParamType { .number } }
extension Bool: RouteParameter { public static var paramType: ParamType { .boolean } }
