public import SwitchyardProtocol

/// Another plugin's coordinator in a chain: its steps are named by string, since its routes are not known here.
public enum Remote {}

/// Where a chain landed: the instance, the tree's revision, and (when it is one of this plugin's instances of the
/// chain's type) the coordinator object itself.
@MainActor
public struct Landed<Current> {
    /// The instance the last step landed on (a child the chain opened, or where it moved to).
    public let instance: InstanceID
    /// The tree's revision the chain committed as; an unchanged revision means the chain changed nothing (a re-tap,
    /// a `setRoot` to the current root).
    public let revision: UInt64
    /// The core the chain was applied through, to find the landed object among its instances.
    weak var core: PluginCore?
    /// The landed coordinator object, to go on from it in code; nil when it belongs to another plugin (or another
    /// type than the chain expected).
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

    /// Moves to the parent coordinator (whose type this side cannot know, so the chain goes on by names).
    public var parent: Chain<Remote> { adding(.parent) }
    /// Moves to the top-most visible coordinator: where a modal flow from "anywhere" should land.
    public var top: Chain<Remote> { adding(.top) }
    /// Removes this coordinator from its parent's stack (its entry and everything above it); lands on the parent.
    public func dismissCoordinator() -> Chain<Remote> { adding(.dismissCoordinator) }
    /// Like ``dismissCoordinator()``, but a tab's coordinator ends the whole tab bar: "this flow is done".
    public func finishFlow() -> Chain<Remote> { adding(.finishFlow) }
    /// Starts this coordinator's flow again: same instance, fresh initial content (`coordinator/create` with reason
    /// `restart`), everything below it destroyed.
    public func restart() -> Chain<Current> { adding(.restart) }
}

/// The key path's route, read from the type's prototype in `core` (names come from property names), or from a
/// fresh prototype when there is no core.
@MainActor
func definition<C: AnyObject, R>(_ keyPath: KeyPath<C, R>, _ core: PluginCore?) -> R? {
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

// One overload per kind of output, so the chain's next type is where the step lands: the opened coordinator of
// this plugin (typed), the same stack (a screen), or another plugin's coordinator (by names).
extension Chain where Current: StackCoordinator {
    /// Pushes or presents the route with its input and continues in the coordinator it opens.
    public func route<Input, Output: Coordinatable>(
        to keyPath: KeyPath<Current, StackRoute<Current, Input, Output>>, _ input: Input
    ) -> Chain<Output> {
        adding(makeStep(.route, keyPath, input, core))
    }
    /// Pushes or presents a screen route with its input and stays on this stack.
    public func route<Input>(
        to keyPath: KeyPath<Current, StackRoute<Current, Input, Screen>>, _ input: Input
    ) -> Chain<Current> {
        adding(makeStep(.route, keyPath, input, core))
    }
    /// Opens another plugin's coordinator with an input and continues in it, by names.
    public func route<Input>(
        to keyPath: KeyPath<Current, StackRoute<Current, Input, PluginCoordinator>>, _ input: Input
    ) -> Chain<Remote> {
        adding(makeStep(.route, keyPath, input, core))
    }
    /// Pushes or presents the route and continues in the coordinator it opens.
    public func route<Output: Coordinatable>(
        to keyPath: KeyPath<Current, StackRoute<Current, NoInput, Output>>
    ) -> Chain<Output> {
        adding(makeStep(.route, keyPath, NoInput(), core))
    }
    /// Pushes or presents a screen route and stays on this stack.
    public func route(to keyPath: KeyPath<Current, StackRoute<Current, NoInput, Screen>>) -> Chain<Current> {
        adding(makeStep(.route, keyPath, NoInput(), core))
    }
    /// Opens another plugin's coordinator and continues in it, by names.
    public func route(to keyPath: KeyPath<Current, StackRoute<Current, NoInput, PluginCoordinator>>) -> Chain<Remote> {
        adding(makeStep(.route, keyPath, NoInput(), core))
    }

    /// Replaces the root (and clears the stack above it) unless it already is this route with this input, in which
    /// case nothing changes (Stinsen's `root()`); continues in the root's coordinator.
    public func setRoot<Input, Output: Coordinatable>(
        _ keyPath: KeyPath<Current, StackRoot<Current, Input, Output>>, _ input: Input
    ) -> Chain<Output> {
        adding(makeStep(.setRoot, keyPath, input, core))
    }
    /// Replaces the root with a screen root and its input; stays on this stack.
    public func setRoot<Input>(
        _ keyPath: KeyPath<Current, StackRoot<Current, Input, Screen>>, _ input: Input
    ) -> Chain<Current> {
        adding(makeStep(.setRoot, keyPath, input, core))
    }
    /// Replaces the root with another plugin's coordinator, opened with an input; continues in it, by names.
    public func setRoot<Input>(
        _ keyPath: KeyPath<Current, StackRoot<Current, Input, PluginCoordinator>>, _ input: Input
    ) -> Chain<Remote> {
        adding(makeStep(.setRoot, keyPath, input, core))
    }
    /// Replaces the root with a coordinator root; continues in it.
    public func setRoot<Output: Coordinatable>(
        _ keyPath: KeyPath<Current, StackRoot<Current, NoInput, Output>>
    ) -> Chain<Output> {
        adding(makeStep(.setRoot, keyPath, NoInput(), core))
    }
    /// Replaces the root with a screen root; stays on this stack.
    public func setRoot(_ keyPath: KeyPath<Current, StackRoot<Current, NoInput, Screen>>) -> Chain<Current> {
        adding(makeStep(.setRoot, keyPath, NoInput(), core))
    }
    /// Replaces the root with another plugin's coordinator; continues in it, by names.
    public func setRoot(_ keyPath: KeyPath<Current, StackRoot<Current, NoInput, PluginCoordinator>>) -> Chain<Remote> {
        adding(makeStep(.setRoot, keyPath, NoInput(), core))
    }

    /// Changes nothing: fails the whole chain unless the root is this route, then continues in its coordinator.
    /// The guard that makes "go to the signed-in area, if signed in" one atomic chain.
    public func hasRoot<Input, Output: Coordinatable>(
        _ keyPath: KeyPath<Current, StackRoot<Current, Input, Output>>
    ) -> Chain<Output> {
        adding(makeStep(.hasRoot, keyPath, nil, core))
    }
    /// Fails the chain unless the root is this route, then continues in that other plugin's coordinator, by names.
    public func hasRoot<Input>(
        _ keyPath: KeyPath<Current, StackRoot<Current, Input, PluginCoordinator>>
    ) -> Chain<Remote> {
        adding(makeStep(.hasRoot, keyPath, nil, core))
    }

    /// The first entry of this route (with this input, when given): everything above it is removed.
    public func focusFirst<Input, Output: Coordinatable>(
        _ keyPath: KeyPath<Current, StackRoute<Current, Input, Output>>, _ input: Input? = nil
    ) -> Chain<Output> {
        adding(makeStep(.focusFirst, keyPath, input, core))
    }
    /// The first entry of this screen route (with this input, when given): everything above it is removed.
    public func focusFirst<Input>(
        _ keyPath: KeyPath<Current, StackRoute<Current, Input, Screen>>, _ input: Input? = nil
    ) -> Chain<Current> {
        adding(makeStep(.focusFirst, keyPath, input, core))
    }

    /// Removes the top entry, pushed or presented alike; fails at the root.
    public func popLast() -> Chain<Current> { adding(.popLast) }
    /// Removes `entry` and everything above it: "back to before this screen".
    public func pop(_ entry: EntryID) -> Chain<Current> { adding(.pop(entry)) }
    /// Keeps the entries up to `index` (`-1`: only the root); fails out of range rather than clamping.
    public func popTo(_ index: Int) -> Chain<Current> { adding(.popTo(index)) }
    /// Removes `count` entries from the top; fails unless there are that many.
    public func popCount(_ count: Int) -> Chain<Current> { adding(.popCount(count)) }
    /// Removes every entry of this stack, pushes and modals; nothing to do at the root is no failure.
    public func popToRoot() -> Chain<Current> { adding(.popToRoot) }
    /// Makes this coordinator's initial route the top: its own entries go, and so does whatever the stacks it was
    /// pushed onto show above it, up to a tab.
    public func popToInitialRoute() -> Chain<Current> { adding(.popToInitialRoute) }
    /// Removes the top-most modal or full-screen entry and everything above it; fails without one.
    public func dismiss() -> Chain<Current> { adding(.dismiss) }
    /// What a close button means: `dismiss()` if a modal is shown, else `popLast()`.
    public func close() -> Chain<Current> { adding(.close) }
}

// MARK: - Tabs and wrappers

extension Chain where Current: TabsCoordinator {
    /// Selects the tab and continues in its coordinator (Stinsen's `focusFirst(\.todos)` on a tab bar).
    public func focusFirst<Output: Coordinatable>(
        _ keyPath: KeyPath<Current, TabRoute<Current, Output>>
    ) -> Chain<Output> {
        adding(makeStep(.focusFirst, keyPath, nil as NoInput?, core))
    }
    /// Selects a tab that is another plugin's coordinator and continues in it, by names.
    public func focusFirst(_ keyPath: KeyPath<Current, TabRoute<Current, PluginCoordinator>>) -> Chain<Remote> {
        adding(makeStep(.focusFirst, keyPath, nil as NoInput?, core))
    }
    /// Selects a screen tab; stays on the tab bar.
    public func focusFirst(_ keyPath: KeyPath<Current, TabRoute<Current, Screen>>) -> Chain<Current> {
        adding(makeStep(.focusFirst, keyPath, nil as NoInput?, core))
    }
    /// Selects the tab (its owner hears `tabSelected`, with `isRepeat` for a re-tap) and continues by names.
    public func selectTab<Output>(_ keyPath: KeyPath<Current, TabRoute<Current, Output>>) -> Chain<Remote> {
        adding(NavigationStep.selectTab(definition(keyPath, core)?.name ?? "?"))
    }
}

extension Chain where Current: WrapperCoordinator {
    /// Moves into the wrapper's child, typed: `chain.child(\.content).popToRoot()`.
    public func child<Output: Coordinatable>(_ keyPath: KeyPath<Current, ChildRoute<Current, Output>>) -> Chain<Output>
    {
        adding(.child)
    }
    /// Moves into the wrapper's child when it is another plugin's coordinator, by names.
    public var child: Chain<Remote> { adding(.child) }
}

// MARK: - Another plugin's coordinators

// The same steps by name: the other plugin's route table is not known when this one compiles, so a misspelling
// fails at run time with `routeNotFound`, and the whole chain with it. Only `route`, `setRoot` and `selectTab` may
// change another plugin's instance (Protocol/README.md §12.2); the rest move or apply to this plugin's own.
extension Chain where Current == Remote {
    /// Moves into the child: a wrapper's, the selected tab's coordinator, or the coordinator at a stack's root.
    public var child: Chain<Remote> { adding(.child) }
    /// Opens the named route, with params checked against its declaration; its owner's guard decides.
    public func route(_ name: String, params: JSONValue? = nil) -> Chain<Remote> { adding(.route(name, params)) }
    /// Replaces the root with the named route (nothing if it already is it); `keepStack` keeps the entries above.
    public func setRoot(_ name: String, params: JSONValue? = nil, keepStack: Bool? = nil) -> Chain<Remote> {
        adding(.setRoot(name, params, keepStack: keepStack))
    }
    /// Fails the chain unless the root is the named route (and params, when given); then moves into it.
    public func hasRoot(_ name: String, params: JSONValue? = nil) -> Chain<Remote> { adding(.hasRoot(name, params)) }
    /// The first entry of the named route (or tab): everything above it is removed.
    public func focusFirst(_ name: String, params: JSONValue? = nil) -> Chain<Remote> {
        adding(.focusFirst(name, params))
    }
    /// Selects the named tab.
    public func selectTab(_ name: String) -> Chain<Remote> { adding(.selectTab(name)) }
    /// Removes the top entry.
    public func popLast() -> Chain<Remote> { adding(.popLast) }
    /// Removes every entry above the root.
    public func popToRoot() -> Chain<Remote> { adding(.popToRoot) }
    /// Removes the top-most modal and everything above it.
    public func dismiss() -> Chain<Remote> { adding(.dismiss) }
    /// Dismisses a modal if there is one, else pops the top entry.
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
    public func query(
        _ query: TreeQueryRequest.Query, route: String? = nil, params: JSONValue? = nil, instance: InstanceID? = nil
    ) async throws -> JSONValue {
        guard let core else { throw ResponseError(.internalError, "no plugin runtime") }
        return try await core.query(
            .init(query: query, instance: instance ?? core.instanceID(of: coordinator), route: route, params: params))
    }
}

extension Coordinatable {
    /// Navigation from this coordinator's logic.
    public var router: Router<Self> { Router(coordinator: self) }

    /// Writes a line to the host's log, as the plugin's (a `log` notification at `level`, default notice, the level
    /// the host gives stderr lines): what a plugin's author reads while debugging it, wherever the plugin runs — a
    /// process of its own, or inside a test (where `print` would reach the test's output instead).
    public func log(_ message: String, level: LogNotification.Level = .notice) {
        PluginCore.owner(of: self)?.runtime?.log(level, message)
    }
}

// One-step shortcuts: each is a chain of one step, applied at once; ``Router/chain`` for more than one.
extension Router where C: StackCoordinator {
    /// Pushes or presents the route with its input (Stinsen's `route(to: \.todo, id)`); returns where it landed.
    @discardableResult
    public func route<Input, Output>(
        to keyPath: KeyPath<C, StackRoute<C, Input, Output>>, _ input: Input
    ) async throws -> Landed<Remote> {
        let landed = try await Chain<Remote>(
            start: instance, core: core, steps: [makeStep(.route, keyPath, input, core)]
        ).apply()
        return landed
    }
    /// Pushes or presents the route (Stinsen's `route(to: \.createTodo)`).
    @discardableResult
    public func route<Output>(to keyPath: KeyPath<C, StackRoute<C, NoInput, Output>>) async throws -> Landed<Remote> {
        try await Chain<Remote>(start: instance, core: core, steps: [makeStep(.route, keyPath, NoInput(), core)])
            .apply()
    }
    /// Switches the root to the route with its input (Stinsen's `root(\.authenticated, user)`); nothing changes if
    /// it already is the root with that input.
    @discardableResult
    public func setRoot<Input, Output>(
        _ keyPath: KeyPath<C, StackRoot<C, Input, Output>>, _ input: Input
    ) async throws -> Landed<Remote> {
        try await Chain<Remote>(start: instance, core: core, steps: [makeStep(.setRoot, keyPath, input, core)]).apply()
    }
    /// Switches the root to the route (Stinsen's `root(\.unauthenticated)`).
    @discardableResult
    public func setRoot<Output>(_ keyPath: KeyPath<C, StackRoot<C, NoInput, Output>>) async throws -> Landed<Remote> {
        try await Chain<Remote>(start: instance, core: core, steps: [makeStep(.setRoot, keyPath, NoInput(), core)])
            .apply()
    }
    /// Removes the top entry, pushed or presented.
    @discardableResult public func popLast() async throws -> Landed<C> { try await chain.popLast().apply() }
    /// Removes every entry above the root.
    @discardableResult public func popToRoot() async throws -> Landed<C> { try await chain.popToRoot().apply() }
    /// Removes the top-most modal and everything above it.
    @discardableResult public func dismiss() async throws -> Landed<C> { try await chain.dismiss().apply() }
    /// Dismisses a modal if there is one, else pops the top entry.
    @discardableResult public func close() async throws -> Landed<C> { try await chain.close().apply() }

    /// Whether the stack's root is this route, asked of the host (the tree there is the truth, not this object).
    public func isRoot<Input, Output>(_ keyPath: KeyPath<C, StackRoot<C, Input, Output>>) async throws -> Bool {
        try await query(.isRoot, route: definition(keyPath, core)?.name) == .bool(true)
    }
}

extension Router {
    /// Removes this coordinator from its parent (Stinsen's `dismissCoordinator()`); lands on the parent.
    @discardableResult
    public func dismissCoordinator() async throws -> Landed<Remote> { try await chain.dismissCoordinator().apply() }
}
