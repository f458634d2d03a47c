public import SwitchyardProtocol

/// The plugin's coordinator types and instances, and the protocol handlers that drive them.
///
/// It works without stdio, so plugin logic is testable in-process: feed it `coordinator/*` params, or drive it over
/// the protocol with `PluginTestConnection` from the `SwitchyardPluginTesting` product.
///
/// Every coordinator it creates or adopts knows its core (through its route wrappers, see `owner(of:)`), so
/// routers, chains and `instanceID` need no global: two cores in one process (two plugins under test) stay apart.
@MainActor
public final class PluginCore {
    /// The last core created, for code written against the old global; the SDK itself never reads it.
    @available(
        *, deprecated,
        message: "a coordinator's router and instanceID find their own core; keep a reference to the core you create"
    )
    public static var current: PluginCore? { lastCreated }
    /// Weak, so the compatibility shim keeps no core alive: whoever serves the core (a runtime) owns it.
    private static weak var lastCreated: PluginCore?

    struct TypeInfo {
        let name: String
        let kind: CoordinatorKind
        let make: @MainActor () -> any Coordinatable
        let prototype: any Coordinatable
        let routes: [(name: String, route: any AnyRoute)]
        let declaration: CoordinatorDeclaration
        /// An instance's state as JSON bytes; nil for a type without state. Made once per type, so an answer pays
        /// no conformance check to find out.
        let encodeState: (@MainActor (any Coordinatable) -> [UInt8]?)?
        /// How a new instance's wrappers are named without `Mirror` (nil: through it), see ``RouteBinding``.
        let layout: RouteBinding.Layout?
    }

    /// The plugin's name, as it reports it in `initialize` (the manifest's name may differ; the host uses that one).
    public let name: String
    /// The plugin's version, reported in `initialize` and shown by `switchyard status`.
    public let version: String
    private var types: [String: TypeInfo] = [:]
    private var typeOrder: [String] = []
    private var prototypesByClass: [ObjectIdentifier: any Coordinatable] = [:]
    private(set) var instances: [InstanceID: any Coordinatable] = [:]
    /// Each type's names as bytes, by class: what the route fast lane compares a request's names with.
    private(set) var laneTypes: [ObjectIdentifier: LaneType] = [:]
    private var ids: [ObjectIdentifier: InstanceID] = [:]
    private var adoptions: [String: [any Coordinatable]] = [:]
    weak var runtime: PluginRuntime?
    /// The deep link a route factory is running for, if any.
    public private(set) var currentLink: DeepLinkContext?
    /// What ``DeclarationCheck`` found in the registered types: the runtime refuses `initialize` with it.
    private(set) var declarationProblems: [String] = []

    /// A core serving `coordinators`: each type's declaration is read once here, from a prototype instance. Most
    /// plugins never call this: ``Plugin/run()`` makes and serves the core.
    public init(name: String, version: String, coordinators: [any Coordinatable.Type]) {
        self.name = name
        self.version = version
        for type in coordinators { register(type) }
        PluginCore.lastCreated = self
    }

    // MARK: - Declarations

    private func register(_ type: any Coordinatable.Type) {
        let (prototype, initialised) = RouteBinding.collecting { type.init() }
        let named = Self.namedRoutes(prototype)
        // Every wrapper lines up with the layout; only the routes not switched off are declared and served.
        let disabled = type.disabledRoutes
        let routes = disabled.isEmpty ? named : named.filter { !disabled.contains($0.name) }
        let kind: CoordinatorKind =
            if prototype is any TabsCoordinator { .tabs } else if prototype is any WrapperCoordinator { .wrapper } else
            { .stack }
        var initial: String?
        switch prototype {
        case let stack as any StackCoordinator:
            initial = Self.initialRoot(stack, routes)?.name
        case let tabs as any TabsCoordinator:
            initial = tabs.initialTab() ?? routes.first { $0.route.transition == .tab }?.name
        default:
            break
        }
        let declaration = CoordinatorDeclaration(
            type: type.typeName, kind: kind, initialRoute: initial,
            routes: routes.map { $0.route.declaration(plugin: name) },
            customDeepLinks: prototype is any DeepLinkHandling ? true : nil,
            appearance: prototype is any AppearanceObserving ? true : nil)
        declarationProblems += DeclarationCheck.problems(
            typeName: type.typeName, swiftType: type,
            routes: zip(declaration.routes, routes).map { ($0, $1.route.takesNoInput, $1.route.inputProblem) })
        let encodeState = (prototype as? any StatefulCoordinator).map { Self.stateEncoder($0) }
        types[type.typeName] = TypeInfo(
            name: type.typeName, kind: kind, make: { type.init() }, prototype: prototype, routes: routes,
            declaration: declaration,
            encodeState: encodeState, layout: RouteBinding.layout(collected: initialised, named: named))
        typeOrder.append(type.typeName)
        prototypesByClass[ObjectIdentifier(type)] = prototype
        laneTypes[ObjectIdentifier(type)] = LaneType(name: type.typeName, routes: routes, encodeState: encodeState)
    }

    /// The route table for `initialize`.
    public var declarations: [CoordinatorDeclaration] { typeOrder.compactMap { types[$0]?.declaration } }

    func prototype(of type: AnyObject.Type) -> AnyObject? { prototypesByClass[ObjectIdentifier(type)] }

    private static func initialRoot(
        _ stack: any StackCoordinator, _ routes: [(name: String, route: any AnyRoute)]
    ) -> (name: String, route: any AnyRoute, params: JSONValue?)? {
        if let chosen = chosenRoot(stack) { return chosen }
        guard let first = routes.first(where: { $0.route.transition == .root && $0.route.takesNoInput }) else {
            return nil
        }
        return (first.name, first.route, nil)
    }

    private static func chosenRoot<S: StackCoordinator>(
        _ stack: S
    ) -> (name: String, route: any AnyRoute, params: JSONValue?)? {
        stack.initialRoot().map { ($0.name, $0.route, $0.params) }
    }

    func target(of route: String, parent: InstanceID?) -> CoordinatorReference? {
        guard let parent, let object = instances[parent], let info = types[type(of: object).typeName] else {
            return nil
        }
        return info.declaration.route(named: route)?.target
    }

    // MARK: - Instances

    /// The host's id of one of this core's coordinator objects; nil for an object the host has not created (yet).
    public func instanceID(of object: AnyObject) -> InstanceID? { ids[ObjectIdentifier(object)] }
    /// The coordinator object of an instance, for tests and tools that look past the protocol
    /// (`core.object(InstanceID(1)) as? TodosCoordinator`).
    public func object(_ id: InstanceID) -> (any Coordinatable)? { instances[id] }
    /// How many instances the core holds: destroyed ones are released, so a test can check nothing leaks.
    public var instanceCount: Int { instances.count }

    /// Keeps a local child coordinator until the host creates its instance (same parent and route, in order).
    func stash(_ object: any Coordinatable, parent: InstanceID?, route: String) -> JSONValue? {
        adoptions["\(parent?.rawValue ?? 0)/\(route)", default: []].append(object)
        return Self.encodeState(object)
    }

    private func adopt(_ params: CoordinatorCreateRequest.Params) -> (any Coordinatable)? {
        guard let parent = params.parent, parent.plugin == name else { return nil }
        let key = "\(parent.instance.rawValue)/\(parent.route)"
        guard var waiting = adoptions[key], !waiting.isEmpty else { return nil }
        let object = waiting.removeFirst()
        adoptions[key] = waiting.isEmpty ? nil : waiting
        return type(of: object).typeName == params.type ? object : nil
    }

    /// A new instance of `info`'s type, its wrappers named and bound to this core if ``RouteBinding`` could.
    private func make(_ info: TypeInfo) -> (object: any Coordinatable, bound: Bool) {
        let (object, routes) = RouteBinding.collecting(info.make)
        guard let layout = info.layout else { return (object, false) }
        return (object, RouteBinding.bind(routes, layout, to: self))
    }

    private func register(_ object: any Coordinatable, as id: InstanceID, bound: Bool = false) {
        // Binds the object to this core: its router, chains, `instanceID` and `deepLink` reach the core from here.
        if !bound {
            for (_, route) in Self.namedRoutes(object) { route.core = self }
        }
        instances[id] = object
        ids[ObjectIdentifier(object)] = id
    }

    // MARK: - State

    static func encodeState(_ object: any Coordinatable) -> JSONValue? {
        guard let stateful = object as? any StatefulCoordinator else { return nil }
        return encode(stateful)
    }

    private static func encode<S: StatefulCoordinator>(_ object: S) -> JSONValue? { try? Coding.encode(object.state) }

    /// ``encodeState(_:)`` straight to JSON bytes (no `JSONValue` tree), for answers written as bytes; the object
    /// is of the prototype's type (a class cast, cheaper than the protocol check it replaces).
    private static func stateEncoder<S: StatefulCoordinator>(
        _ prototype: S
    ) -> @MainActor (any Coordinatable) -> [UInt8]? {
        // No `flatMap` closure: a closure formed on the main actor and passed to a non-isolated function checks
        // its executor each call (`swift_task_isCurrentExecutor`, ~400 instructions), more than this whole body.
        { object in
            guard let typed = object as? S else { return nil }
            return try? JSONValueEncoder().encodeBytes(typed.state)
        }
    }

    private static func restoreState(_ object: any Coordinatable, _ value: JSONValue?) throws {
        guard let value, let stateful = object as? any StatefulCoordinator else { return }
        try decode(stateful, value)
    }

    private static func decode<S: StatefulCoordinator>(_ object: S, _ value: JSONValue) throws {
        object.state = try Coding.decode(S.State.self, from: value)
    }

    /// An upgrade's state: what the previous version wrote, through the type's migration hook.
    private static func migrateState(_ object: any Coordinatable, from version: String, _ value: JSONValue?) throws {
        guard let value, let stateful = object as? any StatefulCoordinator else { return }
        try migrate(stateful, from: version, value)
    }

    private static func migrate<S: StatefulCoordinator>(_ object: S, from version: String, _ value: JSONValue) throws {
        object.state = try S.migrate(from: version, state: value)
    }

    // MARK: - Protocol handlers

    /// `coordinator/create`.
    public func create(_ params: CoordinatorCreateRequest.Params) throws -> CoordinatorCreateRequest.Result {
        let (object, info) = try instantiate(params)
        if params.reason == .restore { return CoordinatorCreateRequest.Result() }
        if params.reason == .upgrade { return CoordinatorCreateRequest.Result(state: Self.encodeState(object)) }
        var result = try initialContent(of: object, info, params)
        result.state = Self.encodeState(object)
        return result
    }

    /// The instance `params` asks for, made (or adopted, or kept on `restart`), registered, its state restored and
    /// told it was created.
    func instantiate(_ params: CoordinatorCreateRequest.Params) throws -> (any Coordinatable, TypeInfo) {
        guard let info = types[params.type] else {
            throw ResponseError(
                .invalidParams, "plugin '\(name)' has no coordinator type '\(params.type)'", data: ["field": "type"])
        }
        let existing: (any Coordinatable)? =
            switch params.reason {
            case .restart: instances[params.instance]
            case .new: adopt(params)
            case .restore, .upgrade: nil
            }
        let (object, bound) = existing.map { ($0, false) } ?? make(info)
        register(object, as: params.instance, bound: bound)
        if params.reason == .upgrade {
            let from = params.fromVersion ?? ""
            do { try Self.migrateState(object, from: from, params.state) } catch {
                instances[params.instance] = nil
                throw ResponseError(
                    .internalError,
                    "cannot migrate the state of \(params.type)\(params.instance) from version \(from.isEmpty ? "?" : from): \(error)",
                    data: [
                        "field": "state", "type": .string("\(type(of: error))"),
                        "description": .string(String(reflecting: error)),
                    ])
            }
        } else {
            do {
                try Self.restoreState(object, params.state ?? (params.reason == .new ? params.params : nil))
            } catch {
                throw ResponseError(
                    .invalidParams, "cannot restore the state of \(params.type)\(params.instance): \(error)",
                    data: ["field": "state"])
            }
        }
        var context = CreationContext(
            instance: params.instance, reason: params.reason, params: params.params, parent: params.parent)
        context.fromVersion = params.fromVersion
        object.didCreate(context)
        return (object, info)
    }

    /// A new (or restarted) instance's initial content, without its state (the caller encodes it last, after the
    /// factories that may change it ran).
    func initialContent(
        of object: any Coordinatable, _ info: TypeInfo, _ params: CoordinatorCreateRequest.Params
    ) throws -> CoordinatorCreateRequest.Result {
        let context = { (route: String) in OutputContext(core: self, parent: params.instance, route: route) }
        var result = CoordinatorCreateRequest.Result()
        switch object {
        case let stack as any StackCoordinator:
            guard let root = Self.initialRoot(stack, info.routes) else {
                throw ResponseError(.internalError, "\(params.type) has no root without input; implement initialRoot()")
            }
            let content = try root.route.content(for: object, params: root.params, context: context(root.name))
            result.root = .init(route: root.name, params: root.params, content: content)
        case let tabs as any TabsCoordinator:
            var contents: [CoordinatorCreateRequest.Tab] = []
            let declared = info.routes.filter { $0.route.transition == .tab }
            for name in tabs.initialTabs() ?? declared.map(\.name) {
                guard let route = declared.first(where: { $0.name == name })?.route else {
                    // Not a declared tab: passed on as it is, so that the host's invalidAnswer names it.
                    contents.append(.init(route: name, content: .screen(ScreenDescriptor(name: name))))
                    continue
                }
                contents.append(
                    .init(route: name, content: try route.content(for: object, params: nil, context: context(name))))
            }
            result.tabs = contents
            result.selectedTab = tabs.initialTab()
        default:
            guard let child = info.routes.first(where: { $0.route.transition == .child }) else {
                throw ResponseError(.internalError, "\(params.type) declares no @Child")
            }
            result.child = try child.route.content(for: object, params: nil, context: context(child.name))
        }
        return result
    }

    /// `coordinator/route`.
    public func route(_ params: CoordinatorRouteRequest.Params) throws -> CoordinatorRouteRequest.Result {
        let (content, object, _) = try routeContent(params)
        return CoordinatorRouteRequest.Result(content: content, state: Self.encodeState(object))
    }

    /// `coordinator/route` as JSON bytes, Codable only for the coordinator's state (``RouteFastPath``).
    func routeEncoded(_ params: CoordinatorRouteRequest.Params) throws -> [UInt8] {
        let (content, object, info) = try routeContent(params)
        return RouteFastPath.result(content: content, state: info.encodeState?(object))
    }

    private func routeContent(
        _ params: CoordinatorRouteRequest.Params
    ) throws -> (RouteContent, any Coordinatable, TypeInfo) {
        guard let object = instances[params.instance] else {
            throw ResponseError(
                .instanceNotFound, "plugin '\(name)' has no instance \(params.instance)",
                data: ["instance": .int(params.instance.rawValue)])
        }
        guard let info = types[params.type], let route = Self.route(named: params.route, in: info.routes) else {
            throw ResponseError(
                .routeNotFound, "\(params.type) has no route '\(params.route)'", data: ["route": .string(params.route)])
        }
        currentLink = params.link
        defer { currentLink = nil }
        let content = try route.content(
            for: object, params: params.params,
            context: OutputContext(core: self, parent: params.instance, route: params.route))
        return (content, object, info)
    }

    /// A loop, not `first(where:)`: see ``stateEncoder(_:)``.
    private static func route(named name: String, in routes: [(name: String, route: any AnyRoute)]) -> (any AnyRoute)? {
        for entry in routes where entry.name == name { return entry.route }
        return nil
    }

    /// `coordinator/destroy`.
    public func destroy(_ params: CoordinatorDestroyRequest.Params) {
        guard let object = instances.removeValue(forKey: params.instance) else { return }
        ids[ObjectIdentifier(object)] = nil
        object.didDestroy()
    }

    /// `coordinator/deepLink`: a type with ``DeepLinkHandling`` picks the route.
    public func deepLink(_ params: CoordinatorDeepLinkRequest.Params) throws -> CoordinatorDeepLinkRequest.Result {
        guard let handler = types[params.type]?.prototype as? any DeepLinkHandling else {
            throw ResponseError(.deepLinkInvalid, "\(params.type) does not handle deep links itself")
        }
        var cursor = DeepLinkCursor(segments: params.segments, query: params.query)
        do {
            let decision = try Self.handle(handler, &cursor)
            return CoordinatorDeepLinkRequest.Result(
                route: decision.route, params: decision.params, consumed: cursor.consumed)
        } catch let rejection as DeepLinkRejection {
            throw ResponseError(.deepLinkInvalid, rejection.reason)
        }
    }

    private static func handle<H: DeepLinkHandling>(
        _ handler: H, _ cursor: inout DeepLinkCursor
    ) throws -> DeepLinkDecision {
        try H.handleDeepLink(&cursor)
    }

    /// `coordinator/dismissed`.
    public func dismissed(_ params: CoordinatorDismissedNotification.Params) {
        instances[params.instance]?.dismissed(route: params.route, entry: params.entry, reason: params.reason)
    }

    /// `coordinator/action`: the instance's coordinator decides what the screen's action does.
    public func action(_ params: CoordinatorActionRequest.Params) throws -> CoordinatorActionRequest.Result {
        guard let object = instances[params.instance] else {
            throw ResponseError(
                .instanceNotFound, "plugin '\(name)' has no instance \(params.instance)",
                data: ["instance": .int(params.instance.rawValue)])
        }
        let steps: [NavigationStep]
        do {
            steps = try object.action(
                ScreenAction(name: params.action, route: params.route, entry: params.entry, params: params.params))
        } catch let rejection as Rejection {
            // A refusal the user should read (a form left empty, a locked account), as a route's guard refuses.
            throw ResponseError(
                .rejectedByGuard, rejection.reason,
                data: ["route": .string(params.route), "action": .string(params.action)])
        }
        return CoordinatorActionRequest.Result(steps: steps.isEmpty ? nil : steps)
    }

    /// `coordinator/tabSelected`.
    public func tabSelected(_ params: CoordinatorTabSelectedNotification.Params) {
        (instances[params.instance] as? any TabsCoordinator)?.tabSelected(params.tab, isRepeat: params.isRepeat)
    }

    // MARK: - Talking to the host

    func navigate(from start: InstanceID, steps: [NavigationStep]) async throws -> NavigateRequest.Result {
        guard let runtime else { throw ResponseError(.internalError, "not connected to a host") }
        return try await runtime.request(NavigateRequest.self, .init(instance: start, steps: steps))
    }

    func query(_ params: TreeQueryRequest.Params) async throws -> JSONValue {
        guard let runtime else { throw ResponseError(.internalError, "not connected to a host") }
        return try await runtime.request(TreeQueryRequest.self, params).result
    }

    /// Serves the coordinator methods on `runtime`. The handlers hold the core strongly: the runtime is what keeps
    /// a served core alive (the core points back at it weakly).
    public func attach(to runtime: PluginRuntime) {
        self.runtime = runtime
        runtime.setCoordinators(declarations)
        runtime.declarationProblems = declarationProblems
        serveCreate(on: runtime)
        runtime.onRequestEncoded(CoordinatorRouteRequest.method) { raw in
            if let params = RouteFastPath.params(raw) { return try self.routeEncoded(params) }
            let params: CoordinatorRouteRequest.Params
            do { params = try Coding.decode(CoordinatorRouteRequest.Params.self, from: raw) } catch {
                throw ResponseError.invalidParams(method: CoordinatorRouteRequest.method, error)
            }
            return try self.routeEncoded(params)
        }
        // After the handler above, which would take the lane back: routes in the host's shape skip it.
        runtime.routeLane = self
        runtime.onRequest(CoordinatorDestroyRequest.self) {
            self.destroy($0)
            return Empty()
        }
        runtime.onRequest(CoordinatorDeepLinkRequest.self) { try self.deepLink($0) }
        runtime.onRequest(CoordinatorActionRequest.self) { try self.action($0) }
        runtime.onNotification(CoordinatorDismissedNotification.self) { self.dismissed($0) }
        runtime.onNotification(CoordinatorTabSelectedNotification.self) { self.tabSelected($0) }
        runtime.onNotification(CoordinatorAppearedNotification.self) {
            (self.instances[$0.instance] as? any AppearanceObserving)?.appeared(entry: $0.entry)
        }
    }
}
