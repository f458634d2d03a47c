public import SwitchyardProtocol

/// How a `@Route` presents its content.
public enum Presentation: Sendable {
    /// On the navigation stack, with a back button: the next step of the same flow.
    case push
    /// A sheet over the stack: a side task the user finishes or dismisses.
    case modal
    /// Covers everything: a task that must have the whole screen (a camera, a player).
    case fullScreen

    var transition: Transition {
        switch self {
        case .push: .push
        case .modal: .modal
        case .fullScreen: .fullScreen
        }
    }
}

/// What every route wrapper offers the runtime, without its generic parameters.
@MainActor
protocol AnyRoute: AnyObject {
    var name: String { get set }
    /// The core that registered the coordinator owning this wrapper (see ``PluginCore/owner(of:)``).
    var core: PluginCore? { get set }
    var transition: Transition { get }
    func declaration(plugin: String) -> RouteDeclaration
    /// Decodes the params, runs the factory on `coordinator`, and turns the output into wire content.
    func content(for coordinator: AnyObject, params: JSONValue?, context: OutputContext) throws -> RouteContent
    var takesNoInput: Bool { get }
    /// Why the factory's input cannot travel as the route's params (see ``DeclarationCheck``), or nil.
    var inputProblem: String? { get }
}

/// The generic part of every route wrapper: its factory, how its input travels, and what it opens.
@MainActor
public class RouteDefinition<C: AnyObject, Input: Codable, Output: RouteOutput>: AnyRoute {
    /// The route's name: the property's name, set when the coordinator is registered.
    public internal(set) var name = ""
    /// Set when a core registers the coordinator: the wrappers are the only storage the SDK has inside a plugin
    /// author's class, so they carry its link to the core. Weak: the core owns its instances, not the reverse.
    weak var core: PluginCore?
    /// How the route opens: `root`, `push`, `modal`, `fullScreen`, `tab` or `child`, fixed by the wrapper.
    public let transition: Transition
    /// The path pattern that reaches this route from its coordinator in a deep link (`todo/:id`), or nil for a
    /// route links cannot open.
    public let deepLink: String?
    let factory: (C, Input) throws -> Output
    let param: String?
    let explicitParams: [ParamDeclaration]?
    let explicitTarget: PluginTarget?
    /// The actions the route's screen emits (`user/action`), handled by ``Coordinatable/action(_:)``.
    public let actions: [ActionDeclaration]?
    /// Other presentations a chain may pick for this route (`.presented(as:)`); the declared one is the default.
    public let transitions: [Transition]?
    /// Presentation options its entries get unless a chain gives its own (detents, no interactive dismissal...).
    public let presentation: PresentationOptions?
    /// A tab's title, symbol and starting badge in the tab bar (`@Tab(tabItem:)`).
    public let tabItem: TabItem?

    init(
        transition: Transition, deepLink: String?, param: String?, params: [ParamDeclaration]?, target: PluginTarget?,
        actions: [ActionDeclaration]? = nil, transitions: [Transition]? = nil, presentation: PresentationOptions? = nil,
        tabItem: TabItem? = nil, factory: @escaping (C, Input) throws -> Output
    ) {
        self.tabItem = tabItem
        self.actions = actions
        self.transitions = transitions
        self.presentation = presentation
        self.transition = transition
        self.deepLink = deepLink
        self.param = param
        self.explicitParams = params
        self.explicitTarget = target
        self.factory = factory
        RouteBinding.initialised(self)
    }

    var takesNoInput: Bool { Input.self == NoInput.self }

    /// An input that decodes from one JSON value or an array (a `String`-backed enum, say) but is not a
    /// ``RouteParameter`` would be handed the route's whole params object and fail at every call ("expected a
    /// string, found object"); found once, when the type is registered.
    var inputProblem: String? {
        guard Input.self != NoInput.self, !takesScalar, let shape = ParamProbe.shape(of: Input.self), shape != .keyed
        else { return nil }
        if shape == .single {
            let type = (Input.self as? any RawRepresentable.Type).map { ParamProbe.paramType(of: Self.rawType($0)) }
            return """
                the factory's input \(Input.self) is a single value, but a route's params travel as a JSON object: \
                make it a RouteParameter (`extension \(Input.self): RouteParameter { public static var paramType: \
                ParamType { .\(type ?? .string) } }`), sent as the one param '\(parameterName)', or take a Codable \
                struct with a property of that type
                """
        }
        return """
            the factory's input \(Input.self) is an array, but a route's params travel as a JSON object: take a \
            Codable struct with a property of that type
            """
    }

    private static func rawType<R: RawRepresentable>(_: R.Type) -> Any.Type { R.RawValue.self }

    /// Whether the input is a single value (``RouteParameter``), travelling as one named param. Kept: a conformance
    /// check per request was a measurable part of a route's cost.
    private(set) lazy var takesScalar: Bool = Input.self is any RouteParameter.Type

    /// Reads a single-value input straight from its JSON value (``RouteScalar``); nil when the input is not one of
    /// the scalars it reads. Picked on first use: a route wrapper is made with every instance of its coordinator,
    /// and picking costs a function-type cast (eagerly, 500 instructions of a restored instance's four routes).
    private(set) lazy var scalarReader: (@Sendable (JSONValue) throws -> Input)? = RouteScalar.reader(for: Input.self)

    /// The param name a single-value input travels as: `param:`, else the deep-link pattern's first capture, else
    /// `value`. Kept, as it is read on every request and splits the pattern.
    private(set) lazy var parameterName: String = Self.firstParameterName(param: param, deepLink: deepLink)

    private static func firstParameterName(param: String?, deepLink: String?) -> String {
        if let param { return param }
        for segment in (deepLink ?? "").split(separator: "/") {
            if segment.hasPrefix(":") { return String(segment.dropFirst()) }
            if segment.hasPrefix("{") && segment.hasSuffix("}") { return String(segment.dropFirst().dropLast()) }
        }
        return "value"
    }

    func declaration(plugin: String) -> RouteDeclaration {
        let params: [ParamDeclaration]? =
            if let explicitParams { explicitParams } else if Input.self == NoInput.self {
                []
            } else if let scalar = Input.self as? any RouteParameter.Type {
                [ParamDeclaration(name: parameterName, type: scalar.paramType)]
            } else { ParamProbe.declarations(of: Input.self) }
        return RouteDeclaration(
            name: name, transition: transition, deepLink: deepLink, params: params, target: target, actions: actions,
            transitions: transitions, presentation: presentation, targetParams: explicitTarget?.params,
            tabItem: tabItem)
    }

    var target: CoordinatorReference? {
        if let explicitTarget { return explicitTarget.reference }
        if let local = Output.self as? any Coordinatable.Type { return CoordinatorReference(type: local.typeName) }
        return nil
    }

    func decodeInput(_ params: JSONValue?) throws -> Input {
        if Input.self == NoInput.self, let none = NoInput() as? Input { return none }
        do {
            if takesScalar {
                guard let value = params?[parameterName] else {
                    throw ResponseError(
                        .invalidParams, "route '\(name)' needs param '\(parameterName)'",
                        data: ["field": .string(parameterName)])
                }
                // do/catch, not `try?`: an `Input?` here would look the metadata up again.
                if let scalarReader {
                    do { return try scalarReader(value) } catch {}
                }
                do { return try Coding.decode(Input.self, from: value) } catch {
                    // The value alone is decoded, so the error's own path is empty: name the param (§7, data.field).
                    let (_, reason) = describeDecodingError(error)
                    throw ResponseError(
                        .invalidParams, "route '\(name)', param '\(parameterName)': \(reason)",
                        data: ["field": .string(parameterName)])
                }
            }
            return try Coding.decode(Input.self, from: params)
        } catch let error as ResponseError {
            throw error
        } catch {
            throw ResponseError.invalidParams(method: "route '\(name)'", error)
        }
    }

    func encodeInput(_ input: Input) throws -> JSONValue? {
        if Input.self == NoInput.self { return nil }
        let value = try Coding.encode(input)
        if takesScalar { return .object([parameterName: value]) }
        return value
    }

    func content(for coordinator: AnyObject, params: JSONValue?, context: OutputContext) throws -> RouteContent {
        guard let typed = coordinator as? C else {
            throw ResponseError(.internalError, "route '\(name)' belongs to \(C.self), not \(type(of: coordinator))")
        }
        let input = try decodeInput(params)
        do {
            return try factory(typed, input).routeContent(context)
        } catch let rejection as Rejection {
            throw ResponseError(.rejectedByGuard, rejection.reason, data: rejection.data(route: name))
        } catch let error as ResponseError {
            throw error
        } catch {
            // Any other error is a bug in the factory: name the route and both names of its type, and how to refuse
            // on purpose, beside what the runtime's answer says of the error itself.
            let typeName = (C.self as? any Coordinatable.Type)?.typeName ?? "\(C.self)"
            let answer = PluginRuntime.answer(for: error)
            var data = answer.data?.objectValue ?? [:]
            data["route"] = .string(name)
            throw ResponseError(
                .internalError,
                "route '\(name)' of \(typeName) (\(C.self)): its factory threw \(type(of: error)): \(answer.message); fix it, or throw Rejection(\"why\") to refuse the route on purpose",
                data: .object(data))
        }
    }
}

// MARK: - @Route and @Root (stack coordinators)

/// A route of a stack coordinator: `@Route(.push) var todo = makeTodo`.
///
/// The factory may take one input (a single value, sent as one named param, or a `Codable` struct) and returns a
/// ``Screen``, one of this plugin's coordinators, or a ``PluginCoordinator`` (then give `target:`). Throwing a
/// ``Rejection`` rejects the route like a guard.
@MainActor
@propertyWrapper
public final class StackRoute<C: StackCoordinator, Input: Codable, Output: RouteOutput>: RouteDefinition<
    C, Input, Output
>
{
    /// The wrapper itself: `\.todo` key paths name the route in typed chains, and the SDK reads the declaration
    /// from it.
    public var wrappedValue: StackRoute<C, Input, Output> { self }

    init(
        _ presentation: Presentation, deepLink: String?, param: String?, params: [ParamDeclaration]?,
        target: PluginTarget?,
        actions: [ActionDeclaration]? = nil, also: [Presentation]? = nil, options: PresentationOptions? = nil,
        factory: @escaping (C, Input) throws -> Output
    ) {
        super.init(
            transition: presentation.transition, deepLink: deepLink, param: param, params: params, target: target,
            actions: actions,
            transitions: also?.map(\.transition), presentation: options, factory: factory)
    }
}

extension StackRoute {
    /// A route whose factory takes an input: `@Route(.push, deepLink: "todo/:id") var todo = makeTodo` with
    /// `func makeTodo(_ id: String) -> Screen`. A single value travels as one param named `param:` (default: the
    /// pattern's first capture); a `Codable` struct declares its fields. `params:` replaces the declaration when
    /// the input's own cannot be read (a custom `init(from:)`). `actions:` declares what the screen emits
    /// (`actions: ["complete"]`), handled by the coordinator's ``Coordinatable/action(_:)``. `also:` lists other
    /// presentations a chain may pick (`.presented(as: .fullScreen)`), `options:` the entry's presentation options.
    public convenience init(
        wrappedValue: @escaping (C) -> (Input) throws -> Output, _ presentation: Presentation, deepLink: String? = nil,
        param: String? = nil, params: [ParamDeclaration]? = nil, actions: [ActionDeclaration]? = nil,
        also: [Presentation]? = nil,
        options: PresentationOptions? = nil
    ) {
        self.init(
            presentation, deepLink: deepLink, param: param, params: params, target: nil, actions: actions, also: also,
            options: options
        ) { try wrappedValue($0)($1) }
    }

    /// A route whose factory takes nothing: `@Route(.modal, deepLink: "new") var createTodo = makeCreateTodo`.
    public convenience init(
        wrappedValue: @escaping (C) -> () throws -> Output, _ presentation: Presentation, deepLink: String? = nil,
        actions: [ActionDeclaration]? = nil, also: [Presentation]? = nil, options: PresentationOptions? = nil
    ) where Input == NoInput {
        self.init(
            presentation, deepLink: deepLink, param: nil, params: nil, target: nil, actions: actions, also: also,
            options: options
        ) {
            coordinator, _ in try wrappedValue(coordinator)()
        }
    }

    /// A route to another plugin's coordinator, with an input: `target:` declares which type it opens, so the host
    /// checks the composition at start and validates links through it before the other plugin is asked.
    public convenience init(
        wrappedValue: @escaping (C) -> (Input) throws -> Output, _ presentation: Presentation, target: PluginTarget,
        deepLink: String? = nil, param: String? = nil, params: [ParamDeclaration]? = nil
    ) where Output == PluginCoordinator {
        self.init(presentation, deepLink: deepLink, param: param, params: params, target: target) {
            try wrappedValue($0)($1)
        }
    }

    /// A route to another plugin's coordinator, without input:
    /// `@Route(.push, target: .coordinator("profile", in: "profile")) var owner = makeOwner`.
    public convenience init(
        wrappedValue: @escaping (C) -> () throws -> Output, _ presentation: Presentation, target: PluginTarget,
        deepLink: String? = nil
    ) where Input == NoInput, Output == PluginCoordinator {
        self.init(presentation, deepLink: deepLink, param: nil, params: nil, target: target) { coordinator, _ in
            try wrappedValue(coordinator)()
        }
    }
}

/// A root of a stack coordinator: `@Root var start = makeStart`. A stack may declare several and switch between them
/// with `setRoot` (Stinsen's MainCoordinator with unauthenticated and authenticated roots).
@MainActor
@propertyWrapper
public final class StackRoot<C: StackCoordinator, Input: Codable, Output: RouteOutput>: RouteDefinition<
    C, Input, Output
>
{
    /// The wrapper itself: `\.todo` key paths name the route in typed chains, and the SDK reads the declaration
    /// from it.
    public var wrappedValue: StackRoot<C, Input, Output> { self }

    init(
        deepLink: String?, param: String?, params: [ParamDeclaration]?, target: PluginTarget?,
        actions: [ActionDeclaration]? = nil,
        factory: @escaping (C, Input) throws -> Output
    ) {
        super.init(
            transition: .root, deepLink: deepLink, param: param, params: params, target: target, actions: actions,
            factory: factory)
    }
}

extension StackRoot {
    /// A root without input: `@Root var list = makeList`. The first such root is the default initial root.
    public convenience init(wrappedValue: @escaping (C) -> () throws -> Output) where Input == NoInput {
        self.init(deepLink: nil, param: nil, params: nil, target: nil) { coordinator, _ in
            try wrappedValue(coordinator)()
        }
    }

    /// A root without input that a deep link can switch to (`setRoot`, or `hasRoot` when it is already the root);
    /// `actions:` declares what its screen emits.
    public convenience init(
        wrappedValue: @escaping (C) -> () throws -> Output, deepLink: String? = nil, actions: [ActionDeclaration]?
    )
    where Input == NoInput {
        self.init(deepLink: deepLink, param: nil, params: nil, target: nil, actions: actions) { coordinator, _ in
            try wrappedValue(coordinator)()
        }
    }

    /// A root without input that a deep link can switch to (`setRoot`, or `hasRoot` when it is already the root).
    public convenience init(wrappedValue: @escaping (C) -> () throws -> Output, deepLink: String?)
    where Input == NoInput {
        self.init(deepLink: deepLink, param: nil, params: nil, target: nil) { coordinator, _ in
            try wrappedValue(coordinator)()
        }
    }

    /// A root that takes an input (`@Root var authenticated = makeAuthenticated` with `(User) -> …`): set with
    /// `setRoot(\.authenticated, user)`; never the default initial root, which has no input to give it.
    public convenience init(
        wrappedValue: @escaping (C) -> (Input) throws -> Output, deepLink: String? = nil, param: String? = nil,
        params: [ParamDeclaration]? = nil
    ) {
        self.init(deepLink: deepLink, param: param, params: params, target: nil) { try wrappedValue($0)($1) }
    }

    /// A root that is another plugin's coordinator (the demo's main stack: its roots are the signed-out and
    /// signed-in flows, each a plugin of its own).
    public convenience init(
        wrappedValue: @escaping (C) -> () throws -> Output, target: PluginTarget, deepLink: String? = nil
    )
    where Input == NoInput, Output == PluginCoordinator {
        self.init(deepLink: deepLink, param: nil, params: nil, target: target) { coordinator, _ in
            try wrappedValue(coordinator)()
        }
    }

    /// A root that is another plugin's coordinator, opened with an input (`setRoot(\.authenticated, user)`).
    public convenience init(
        wrappedValue: @escaping (C) -> (Input) throws -> Output, target: PluginTarget, deepLink: String? = nil,
        param: String? = nil,
        params: [ParamDeclaration]? = nil
    ) where Output == PluginCoordinator {
        self.init(deepLink: deepLink, param: param, params: params, target: target) { try wrappedValue($0)($1) }
    }
}

// MARK: - @Tab (tabs coordinators) and @Child (wrappers)

/// A tab of a tabs coordinator, in declaration order: `@Tab var todos = makeTodos`.
@MainActor
@propertyWrapper
public final class TabRoute<C: TabsCoordinator, Output: RouteOutput>: RouteDefinition<C, NoInput, Output> {
    /// The wrapper itself: `\.todo` key paths name the route in typed chains, and the SDK reads the declaration
    /// from it.
    public var wrappedValue: TabRoute<C, Output> { self }

    init(deepLink: String?, target: PluginTarget?, tabItem: TabItem?, factory: @escaping (C) throws -> Output) {
        super.init(
            transition: .tab, deepLink: deepLink, param: nil, params: nil, target: target, tabItem: tabItem
        ) { coordinator, _ in
            try factory(coordinator)
        }
    }
}

extension TabRoute {
    /// A tab showing a screen or one of this plugin's coordinators; `deepLink:` is the segment that selects it,
    /// `tabItem:` what the tab bar shows (Stinsen's `tabItem`).
    public convenience init(
        wrappedValue: @escaping (C) -> () throws -> Output, deepLink: String? = nil, tabItem: TabItem? = nil
    ) {
        self.init(deepLink: deepLink, target: nil, tabItem: tabItem) { try wrappedValue($0)() }
    }

    /// A tab that is another plugin's coordinator (a feature team's whole flow in one tab).
    public convenience init(
        wrappedValue: @escaping (C) -> () throws -> Output, target: PluginTarget, deepLink: String? = nil,
        tabItem: TabItem? = nil
    )
    where Output == PluginCoordinator {
        self.init(deepLink: deepLink, target: target, tabItem: tabItem) { try wrappedValue($0)() }
    }
}

extension TabItem {
    /// `TabItem("Todos", symbol: "checklist")`: a tab's label, a symbol of the documented set (§21), and the badge
    /// its entry starts with.
    public init(_ title: String, symbol: String? = nil, badge: String? = nil) {
        self.init(title: title, symbol: symbol, badge: badge)
    }
}

/// The one child of a wrapper coordinator (Stinsen's `NavigationViewCoordinator`): `@Child var content = makeContent`.
@MainActor
@propertyWrapper
public final class ChildRoute<C: WrapperCoordinator, Output: RouteOutput>: RouteDefinition<C, NoInput, Output> {
    /// The wrapper itself: `\.todo` key paths name the route in typed chains, and the SDK reads the declaration
    /// from it.
    public var wrappedValue: ChildRoute<C, Output> { self }

    init(deepLink: String?, target: PluginTarget?, factory: @escaping (C) throws -> Output) {
        super.init(transition: .child, deepLink: deepLink, param: nil, params: nil, target: target) { coordinator, _ in
            try factory(coordinator)
        }
    }
}

extension ChildRoute {
    /// The child as a screen or one of this plugin's coordinators (usually a stack: deep links pass through the
    /// wrapper into it).
    public convenience init(wrappedValue: @escaping (C) -> () throws -> Output, deepLink: String? = nil) {
        self.init(deepLink: deepLink, target: nil) { try wrappedValue($0)() }
    }

    /// The child as another plugin's coordinator.
    public convenience init(
        wrappedValue: @escaping (C) -> () throws -> Output, target: PluginTarget, deepLink: String? = nil
    )
    where Output == PluginCoordinator {
        self.init(deepLink: deepLink, target: target) { try wrappedValue($0)() }
    }
}
