public import SwitchyardProtocol

/// Another plugin's coordinator in a chain: its steps are named by string, since its routes are not known here.
public enum Remote {}

/// Where a chain landed: the instance, the tree's revision, and (when it is one of this plugin's instances of the
/// chain's type) the coordinator object itself.
@MainActor
public struct Landed<Current> {
    public let instance: InstanceID
    public let revision: UInt64
    /// The core the chain was applied through, to find the landed object among its instances.
    weak var core: PluginCore?
    public var coordinator: Current? { core?.object(instance) as? Current }
}

/// A chain of navigation steps, applied atomically by the host with ``apply()``: Stinsen's chaining, across
/// processes.
///
/// ```swift
/// try await router.chain.focusFirst(\.todos).child.popToRoot().route("todo", params: ["id": "42"]).apply()
/// ```
/// Steps on this plugin's coordinator types are typed (a misspelled route or an impossible step does not compile);
/// once the chain enters another plugin's coordinator it continues as `Chain<Remote>`, with names.
@MainActor
public struct Chain<Current> {
    /// The instance the first step applies to (nil while the coordinator is not in the host's tree).
    public let start: InstanceID?
    /// The steps so far: what ``apply()`` sends, and what a unit test of plugin logic can assert on.
    public let steps: [NavigationStep]
    /// The core of the coordinator the chain started at: it names the routes of each step and sends the chain.
    /// Nil for a coordinator no core registered (a unit test's own object): the chain still builds, but cannot apply.
    weak var core: PluginCore?

    init(start: InstanceID?, core: PluginCore?, steps: [NavigationStep] = []) {
        self.start = start
        self.core = core
        self.steps = steps
    }

    func adding<Next>(_ step: NavigationStep, as next: Next.Type = Next.self) -> Chain<Next> {
        Chain<Next>(start: start, core: core, steps: steps + [step])
    }

    /// Sends the chain to the host, which applies it fully, as one revision, or not at all.
    @discardableResult
    public func apply() async throws -> Landed<Current> {
        guard let core else {
            throw ResponseError(.internalError, "no plugin runtime: chains apply only inside a running plugin")
        }
        guard let start else {
            throw ResponseError(.instanceNotFound, "the coordinator is not in the host's tree (yet)")
        }
        let result = try await core.navigate(from: start, steps: steps)
        return Landed(instance: result.instance, revision: result.revision, core: core)
    }

    // Moves that work from any coordinator.
    public var parent: Chain<Remote> { adding(.parent) }
    public var top: Chain<Remote> { adding(.top) }
    public func dismissCoordinator() -> Chain<Remote> { adding(.dismissCoordinator) }
    public func finishFlow() -> Chain<Remote> { adding(.finishFlow) }
    public func restart() -> Chain<Current> { adding(.restart) }
}

/// The key path's route, read from the type's prototype in `core` (names come from property names), or from a
/// fresh prototype when there is no core.
@MainActor
private func definition<C: AnyObject, R>(_ keyPath: KeyPath<C, R>, _ core: PluginCore?) -> R? {
    let prototype = (core?.prototype(of: C.self) ?? PluginCore.standalonePrototype(C.self)) as? C
    return prototype.map { $0[keyPath: keyPath] }
}

@MainActor
private func makeStep<C: AnyObject, Input, Output, R: RouteDefinition<C, Input, Output>>(
    _ op: NavigationStep.Operation, _ keyPath: KeyPath<C, R>, _ input: Input?, _ core: PluginCore?
) -> NavigationStep {
    guard let definition = definition(keyPath, core) else { return NavigationStep(op: op, route: "?") }
    // Not `?? nil`: JSONValue is ExpressibleByNilLiteral, so that would turn "no params" into JSON null.
    var params: JSONValue?
    if let input, let encoded = try? definition.encodeInput(input) { params = encoded }
    return NavigationStep(op: op, route: definition.name, params: params)
}

// MARK: - Stack coordinators

extension Chain where Current: StackCoordinator {
    public func route<Input, Output: Coordinatable>(to keyPath: KeyPath<Current, StackRoute<Current, Input, Output>>, _ input: Input) -> Chain<Output> {
        adding(makeStep(.route, keyPath, input, core))
    }
    public func route<Input>(to keyPath: KeyPath<Current, StackRoute<Current, Input, Screen>>, _ input: Input) -> Chain<Current> {
        adding(makeStep(.route, keyPath, input, core))
    }
    public func route<Input>(to keyPath: KeyPath<Current, StackRoute<Current, Input, PluginCoordinator>>, _ input: Input) -> Chain<Remote> {
        adding(makeStep(.route, keyPath, input, core))
    }
    public func route<Output: Coordinatable>(to keyPath: KeyPath<Current, StackRoute<Current, NoInput, Output>>) -> Chain<Output> {
        adding(makeStep(.route, keyPath, NoInput(), core))
    }
    public func route(to keyPath: KeyPath<Current, StackRoute<Current, NoInput, Screen>>) -> Chain<Current> {
        adding(makeStep(.route, keyPath, NoInput(), core))
    }
    public func route(to keyPath: KeyPath<Current, StackRoute<Current, NoInput, PluginCoordinator>>) -> Chain<Remote> {
        adding(makeStep(.route, keyPath, NoInput(), core))
    }

    public func setRoot<Input, Output: Coordinatable>(_ keyPath: KeyPath<Current, StackRoot<Current, Input, Output>>, _ input: Input) -> Chain<Output> {
        adding(makeStep(.setRoot, keyPath, input, core))
    }
    public func setRoot<Input>(_ keyPath: KeyPath<Current, StackRoot<Current, Input, Screen>>, _ input: Input) -> Chain<Current> {
        adding(makeStep(.setRoot, keyPath, input, core))
    }
    public func setRoot<Input>(_ keyPath: KeyPath<Current, StackRoot<Current, Input, PluginCoordinator>>, _ input: Input) -> Chain<Remote> {
        adding(makeStep(.setRoot, keyPath, input, core))
    }
    public func setRoot<Output: Coordinatable>(_ keyPath: KeyPath<Current, StackRoot<Current, NoInput, Output>>) -> Chain<Output> {
        adding(makeStep(.setRoot, keyPath, NoInput(), core))
    }
    public func setRoot(_ keyPath: KeyPath<Current, StackRoot<Current, NoInput, Screen>>) -> Chain<Current> {
        adding(makeStep(.setRoot, keyPath, NoInput(), core))
    }
    public func setRoot(_ keyPath: KeyPath<Current, StackRoot<Current, NoInput, PluginCoordinator>>) -> Chain<Remote> {
        adding(makeStep(.setRoot, keyPath, NoInput(), core))
    }

    public func hasRoot<Input, Output: Coordinatable>(_ keyPath: KeyPath<Current, StackRoot<Current, Input, Output>>) -> Chain<Output> {
        adding(makeStep(.hasRoot, keyPath, nil, core))
    }
    public func hasRoot<Input>(_ keyPath: KeyPath<Current, StackRoot<Current, Input, PluginCoordinator>>) -> Chain<Remote> {
        adding(makeStep(.hasRoot, keyPath, nil, core))
    }

    /// The first entry of this route (with this input, when given): everything above it is removed.
    public func focusFirst<Input, Output: Coordinatable>(_ keyPath: KeyPath<Current, StackRoute<Current, Input, Output>>, _ input: Input? = nil) -> Chain<Output> {
        adding(makeStep(.focusFirst, keyPath, input, core))
    }
    public func focusFirst<Input>(_ keyPath: KeyPath<Current, StackRoute<Current, Input, Screen>>, _ input: Input? = nil) -> Chain<Current> {
        adding(makeStep(.focusFirst, keyPath, input, core))
    }

    public func popLast() -> Chain<Current> { adding(.popLast) }
    public func pop(_ entry: EntryID) -> Chain<Current> { adding(.pop(entry)) }
    public func popTo(_ index: Int) -> Chain<Current> { adding(.popTo(index)) }
    public func popCount(_ count: Int) -> Chain<Current> { adding(.popCount(count)) }
    public func popToRoot() -> Chain<Current> { adding(.popToRoot) }
    public func popToInitialRoute() -> Chain<Current> { adding(.popToInitialRoute) }
    public func dismiss() -> Chain<Current> { adding(.dismiss) }
    public func close() -> Chain<Current> { adding(.close) }
}

// MARK: - Tabs and wrappers

extension Chain where Current: TabsCoordinator {
    public func focusFirst<Output: Coordinatable>(_ keyPath: KeyPath<Current, TabRoute<Current, Output>>) -> Chain<Output> {
        adding(makeStep(.focusFirst, keyPath, nil as NoInput?, core))
    }
    public func focusFirst(_ keyPath: KeyPath<Current, TabRoute<Current, PluginCoordinator>>) -> Chain<Remote> {
        adding(makeStep(.focusFirst, keyPath, nil as NoInput?, core))
    }
    public func focusFirst(_ keyPath: KeyPath<Current, TabRoute<Current, Screen>>) -> Chain<Current> {
        adding(makeStep(.focusFirst, keyPath, nil as NoInput?, core))
    }
    public func selectTab<Output>(_ keyPath: KeyPath<Current, TabRoute<Current, Output>>) -> Chain<Remote> {
        adding(NavigationStep.selectTab(definition(keyPath, core)?.name ?? "?"))
    }
}

extension Chain where Current: WrapperCoordinator {
    public func child<Output: Coordinatable>(_ keyPath: KeyPath<Current, ChildRoute<Current, Output>>) -> Chain<Output> {
        adding(.child)
    }
    public var child: Chain<Remote> { adding(.child) }
}

// MARK: - Another plugin's coordinators

extension Chain where Current == Remote {
    public var child: Chain<Remote> { adding(.child) }
    public func route(_ name: String, params: JSONValue? = nil) -> Chain<Remote> { adding(.route(name, params)) }
    public func setRoot(_ name: String, params: JSONValue? = nil, keepStack: Bool? = nil) -> Chain<Remote> {
        adding(.setRoot(name, params, keepStack: keepStack))
    }
    public func hasRoot(_ name: String, params: JSONValue? = nil) -> Chain<Remote> { adding(.hasRoot(name, params)) }
    public func focusFirst(_ name: String, params: JSONValue? = nil) -> Chain<Remote> { adding(.focusFirst(name, params)) }
    public func selectTab(_ name: String) -> Chain<Remote> { adding(.selectTab(name)) }
    public func popLast() -> Chain<Remote> { adding(.popLast) }
    public func popToRoot() -> Chain<Remote> { adding(.popToRoot) }
    public func dismiss() -> Chain<Remote> { adding(.dismiss) }
    public func close() -> Chain<Remote> { adding(.close) }
    /// Any step, for operations without a shortcut.
    public func step(_ step: NavigationStep) -> Chain<Remote> { adding(step) }
}

// MARK: - Router

/// Navigation from a coordinator's own logic: `router.chain…apply()` for an atomic chain, or the shortcuts below
/// for one step. (Stinsen's `router.route(to:)`, `root(_:)`, `popLast()`, `dismissCoordinator()`.)
@MainActor
public struct Router<C: Coordinatable> {
    let coordinator: C
    /// The coordinator's core, looked up once per router (nil before a core created or adopted it).
    let core: PluginCore?

    init(coordinator: C) {
        self.coordinator = coordinator
        self.core = PluginCore.owner(of: coordinator)
    }

    /// This instance's id in the core's tree.
    private var instance: InstanceID? { core?.instanceID(of: coordinator) }

    /// A chain starting at this coordinator.
    public var chain: Chain<C> { Chain(start: instance, core: core) }

    /// Asks the host a read-only question about the tree (about this instance unless another is given).
    public func query(_ query: TreeQueryRequest.Query, route: String? = nil, params: JSONValue? = nil, instance: InstanceID? = nil) async throws -> JSONValue {
        guard let core else { throw ResponseError(.internalError, "no plugin runtime") }
        return try await core.query(.init(query: query, instance: instance ?? core.instanceID(of: coordinator), route: route, params: params))
    }
}

extension Coordinatable {
    /// Navigation from this coordinator's logic.
    public var router: Router<Self> { Router(coordinator: self) }
}

extension Router where C: StackCoordinator {
    @discardableResult
    public func route<Input, Output>(to keyPath: KeyPath<C, StackRoute<C, Input, Output>>, _ input: Input) async throws -> Landed<Remote> {
        let landed = try await Chain<Remote>(start: instance, core: core, steps: [makeStep(.route, keyPath, input, core)]).apply()
        return landed
    }
    @discardableResult
    public func route<Output>(to keyPath: KeyPath<C, StackRoute<C, NoInput, Output>>) async throws -> Landed<Remote> {
        try await Chain<Remote>(start: instance, core: core, steps: [makeStep(.route, keyPath, NoInput(), core)]).apply()
    }
    @discardableResult
    public func setRoot<Input, Output>(_ keyPath: KeyPath<C, StackRoot<C, Input, Output>>, _ input: Input) async throws -> Landed<Remote> {
        try await Chain<Remote>(start: instance, core: core, steps: [makeStep(.setRoot, keyPath, input, core)]).apply()
    }
    @discardableResult
    public func setRoot<Output>(_ keyPath: KeyPath<C, StackRoot<C, NoInput, Output>>) async throws -> Landed<Remote> {
        try await Chain<Remote>(start: instance, core: core, steps: [makeStep(.setRoot, keyPath, NoInput(), core)]).apply()
    }
    @discardableResult public func popLast() async throws -> Landed<C> { try await chain.popLast().apply() }
    @discardableResult public func popToRoot() async throws -> Landed<C> { try await chain.popToRoot().apply() }
    @discardableResult public func dismiss() async throws -> Landed<C> { try await chain.dismiss().apply() }
    @discardableResult public func close() async throws -> Landed<C> { try await chain.close().apply() }

    public func isRoot<Input, Output>(_ keyPath: KeyPath<C, StackRoot<C, Input, Output>>) async throws -> Bool {
        try await query(.isRoot, route: definition(keyPath, core)?.name) == .bool(true)
    }
}

extension Router {
    @discardableResult
    public func dismissCoordinator() async throws -> Landed<Remote> { try await chain.dismissCoordinator().apply() }
}
