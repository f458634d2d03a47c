public import SwitchyardProtocol

/// A coordinator type: a flow that declares its routes and decides what each shows.
///
/// Write one as a `final class` conforming to ``StackCoordinator``, ``TabsCoordinator`` or
/// ``WrapperCoordinator``, declare routes with the property wrappers, and give it an `init()` that is cheap and has
/// no side effects (the runtime builds a prototype to read the declarations, and a fresh object per instance).
@MainActor
public protocol Coordinatable: AnyObject, RouteOutput {
    /// Makes a fresh instance. The runtime calls it for a prototype (to read the route wrappers' declarations) and
    /// for every instance the host creates, so it must be cheap and free of side effects; do set-up that needs the
    /// instance's identity or params in ``didCreate(_:)``.
    init()
    /// The type's name in the route table. Default: the class name without a `Coordinator` suffix, first letter
    /// lowercased (`TodosCoordinator` → `todos`).
    static var typeName: String { get }
    /// Routes this process leaves out of the type's route table: feature flags, a route shipped dark and turned on
    /// by a later release (Protocol/README.md §20). Read once at start; the host never routes to them. Default: none.
    static var disabledRoutes: Set<String> { get }
    /// After the host created (or restored, or restarted) this instance.
    func didCreate(_ context: CreationContext)
    /// After the instance left the tree.
    func didDestroy()
    /// An entry of this instance left the tree (popped, dismissed, or removed by the user).
    func dismissed(route: String, entry: EntryID, reason: CoordinatorDismissedNotification.Reason)
    /// The user did something on one of this instance's screens (`actions:` of its route): return the steps to take
    /// from this instance (applied as one chain, one revision), or none to change nothing. Throwing refuses the
    /// action; the client gets the error (a ``Rejection`` as `rejectedByGuard` with its reason, for the user).
    func action(_ action: ScreenAction) throws -> [NavigationStep]
}

/// An action a screen emitted (`coordinator/action`), checked by the host against the route's declaration.
public struct ScreenAction: Sendable {
    /// The action's declared name.
    public let name: String
    /// The route of the screen that emitted it.
    public let route: String
    /// The entry showing that screen: `.pop(action.entry)` removes it with everything above it.
    public let entry: EntryID
    /// The params, as declared for the action.
    public let params: JSONValue?
}

/// Why and where an instance was created, handed to ``Coordinatable/didCreate(_:)``.
public struct CreationContext: Sendable {
    /// The host's id for this instance: what the tree, chains and `tree/query` call it.
    public let instance: InstanceID
    /// `new` (a route opened it), `restart` (a chain's `restart` step: the same instance, its flow begun again),
    /// `restore` (after this plugin restarted, or the host started from a state file: the tree still shows what the
    /// instance showed, so no factory runs and only ``StatefulCoordinator/state`` comes back) or `upgrade` (as
    /// `restore`, from a previous version of the plugin: the state went through
    /// ``StatefulCoordinator/migrate(from:state:)``).
    public let reason: CoordinatorCreateRequest.Reason
    /// The params the opening route passed (another plugin's ``PluginCoordinator/params``, or the state a local
    /// child coordinator was handed over with).
    public let params: JSONValue?
    /// The instance and route that opened this one; nil for the tree's root.
    public let parent: CoordinatorCreateRequest.Parent?
    /// For `upgrade`: the version of the plugin the instance came from (its state already migrated).
    public var fromVersion: String? = nil
}

extension Coordinatable {
    /// The class name without a `Coordinator` suffix, first letter lowercased: `TodosCoordinator` → `todos`. Declare
    /// `static let typeName` to pick another (the name is part of the plugin's contract with manifests and routes).
    public static var typeName: String {
        var name = String(describing: Self.self)
        if name.hasSuffix("Coordinator") && name != "Coordinator" { name.removeLast("Coordinator".count) }
        return name.prefix(1).lowercased() + name.dropFirst()
    }

    /// None: every declared route is in the table.
    public static var disabledRoutes: Set<String> { [] }

    /// Does nothing: most coordinators need no set-up beyond `init()`.
    public func didCreate(_ context: CreationContext) {}
    /// Does nothing: an instance without resources of its own needs no tear-down.
    public func didDestroy() {}
    /// Does nothing: the tree already reflects the removal; implement it to react (save a draft, log analytics).
    public func dismissed(route: String, entry: EntryID, reason: CoordinatorDismissedNotification.Reason) {}
    /// No steps: a coordinator declaring no actions never gets one (the host refuses undeclared actions).
    public func action(_ action: ScreenAction) throws -> [NavigationStep] { [] }

    /// A child coordinator of this plugin: handed to the host, which then creates its instance here.
    public func routeContent(_ context: OutputContext) throws -> RouteContent {
        let params = context.core?.stash(self, parent: context.parent, route: context.route)
        return .coordinator(CoordinatorReference(type: Self.typeName), params: params)
    }

    /// This instance's id in the host's tree (nil before the host created it).
    public var instanceID: InstanceID? { PluginCore.owner(of: self)?.instanceID(of: self) }

    /// The deep link being applied, while a route factory runs for one.
    public var deepLink: DeepLinkContext? { PluginCore.owner(of: self)?.currentLink }
}

/// A root and an ordered stack of pushed and presented entries (Stinsen's `NavigationCoordinatable`).
///
/// ```swift
/// final class TodosCoordinator: StackCoordinator {
///     @Root var list = makeList
///     @Route(.push, deepLink: "todo/:id") var todo = makeTodo
///     @Route(.modal, deepLink: "new") var createTodo = makeCreateTodo
/// }
/// ```
@MainActor
public protocol StackCoordinator: Coordinatable {
    /// `@Route`: an entry pushed or presented on the stack (see ``StackRoute``).
    typealias Route = StackRoute
    /// `@Root`: a possible root of the stack (see ``StackRoot``).
    typealias Root = StackRoot
    /// The root to show when an instance is created. Default (nil): the first declared root without input.
    func initialRoot() -> RootSelection<Self>?
}

extension StackCoordinator {
    /// Nil: the stack starts with the first declared root that takes no input.
    public func initialRoot() -> RootSelection<Self>? { nil }

    /// A root with its input, for ``StackCoordinator/initialRoot()``: `.root(\.authenticated, user)`.
    public func root<Input, Output>(
        _ keyPath: KeyPath<Self, StackRoot<Self, Input, Output>>, _ input: Input
    ) -> RootSelection<Self> {
        RootSelection(route: self[keyPath: keyPath], input: input)
    }

    /// A root without input, for ``StackCoordinator/initialRoot()``: `.root(\.unauthenticated)`, when the choice
    /// depends on something known only at run time (a stored session, a launch argument).
    public func root<Output>(_ keyPath: KeyPath<Self, StackRoot<Self, NoInput, Output>>) -> RootSelection<Self> {
        RootSelection(route: self[keyPath: keyPath], input: NoInput())
    }
}

/// Which root a stack starts with, and with what input.
@MainActor
public struct RootSelection<C: StackCoordinator> {
    let name: String
    let route: any AnyRoute
    let params: JSONValue?

    init<Input, Output>(route: StackRoot<C, Input, Output>, input: Input) {
        self.name = route.name
        self.route = route
        // Not `?? nil`: JSONValue is ExpressibleByNilLiteral, so that would turn "no params" into JSON null.
        if let encoded = try? route.encodeInput(input) { self.params = encoded } else { self.params = nil }
    }
}

/// Ordered tabs, one selected (Stinsen's `TabCoordinatable`). Every tab's content is created eagerly.
///
/// ```swift
/// final class HomeCoordinator: TabsCoordinator {
///     @Tab(target: .coordinator("navigation", in: "todos"), deepLink: "todos") var todos = makeTodos
///     @Tab(deepLink: "profile") var profile = makeProfile
/// }
/// ```
@MainActor
public protocol TabsCoordinator: Coordinatable {
    /// `@Tab`: one tab, in declaration order (see ``TabRoute``).
    typealias Tab = TabRoute
    /// The tab selected at creation. Default (nil): the first.
    func initialTab() -> String?
    /// The tabs shown at creation, in order (SUICoordinator's `setPages` at start). Default (nil): every `@Tab`, in
    /// declaration order. The others can join later with `setTabs`.
    func initialTabs() -> [String]?
    /// A tab was selected; `isRepeat` when it already was (Stinsen's `onTapped(isRepeat)`).
    func tabSelected(_ tab: String, isRepeat: Bool)
}

extension TabsCoordinator {
    /// Nil: the first tab is selected.
    public func initialTab() -> String? { nil }
    /// Nil: every declared tab, in declaration order.
    public func initialTabs() -> [String]? { nil }
    /// Does nothing: the host already moved the selection; implement it to react to a re-tap.
    public func tabSelected(_ tab: String, isRepeat: Bool) {}

    /// The name of a tab, for ``initialTab()``: `tab(\.projects)`.
    public func tab<Output>(_ keyPath: KeyPath<Self, TabRoute<Self, Output>>) -> String { self[keyPath: keyPath].name }
}

/// Exactly one child (Stinsen's `ViewWrapperCoordinator` / `NavigationViewCoordinator`).
@MainActor
public protocol WrapperCoordinator: Coordinatable {
    /// `@Child`: the wrapper's one child (see ``ChildRoute``).
    typealias Child = ChildRoute
}

/// A coordinator told when one of its entries becomes visible again (`coordinator/appeared`, §12.9): what was above
/// it left, or its tab was selected. Jump's and SwiftUI's `onAppear`, to refresh what the screen shows. Conforming
/// declares `appearance` for the type; other types never get the notification.
@MainActor
public protocol AppearanceObserving: Coordinatable {
    /// The entry now on top of this instance (its stack's top or root, its selected tab).
    func appeared(entry: EntryID)
}

/// A coordinator with state the host keeps for it: returned with every answer, written to the state file, and handed
/// back when the instance is restored after a plugin restart.
///
/// In a target with main-actor default isolation, declare the state type `nonisolated struct State: Codable`, like
/// any plain data type.
@MainActor
public protocol StatefulCoordinator: Coordinatable {
    /// What survives a restart: keep it small and plain (it travels with every answer and goes to the state file),
    /// and derive everything else from it.
    associatedtype State: Codable
    /// The current state. Change it in factories and hooks; the SDK sends it with the next answer, and sets it
    /// before ``Coordinatable/didCreate(_:)`` when the host restores the instance.
    var state: State { get set }
    /// A new version of the plugin takes the instance over from `version` (`coordinator/create`, reason `upgrade`,
    /// spec §20.1): turn `state`, as that version wrote it, into this version's (Erlang's `code_change`). The
    /// default decodes it as it is. Throwing refuses the upgrade: it rolls back, the old version serves on.
    static func migrate(from version: String, state: JSONValue) throws -> State
}

extension StatefulCoordinator {
    /// The state as the previous version wrote it: what a version whose `State` did not change needs.
    public static func migrate(from version: String, state: JSONValue) throws -> State {
        try Coding.decode(State.self, from: state)
    }
}

/// A coordinator type that resolves deep links itself instead of the host matching its routes' patterns
/// (Coordinator's `DeepLinkHandling` + `DeepLinkValidityChecking`, in one static function so the host can use it as
/// the dry run before the instance even exists).
@MainActor
public protocol DeepLinkHandling: Coordinatable {
    /// Consumes segments from `cursor` and names the route they lead to; throw ``DeepLinkRejection`` for an invalid
    /// link.
    static func handleDeepLink(_ cursor: inout DeepLinkCursor) throws -> DeepLinkDecision
}

/// The segments of a deep link not consumed yet (Coordinator's `remainingRoutes`), and its query.
public struct DeepLinkCursor: Sendable {
    /// The segments after the ones this coordinator's ancestors consumed, percent-decoded.
    public private(set) var remaining: ArraySlice<String>
    /// The link's query items (`?highlight=1`), the same at every hop.
    public let query: [String: String]
    /// How many segments ``DeepLinkCursor/next()`` took: what the host skips before the next hop.
    public private(set) var consumed = 0

    /// A cursor over `segments`; the SDK makes one per `coordinator/deepLink`, a unit test of
    /// ``DeepLinkHandling/handleDeepLink(_:)`` makes its own.
    public init(segments: [String], query: [String: String] = [:]) {
        remaining = segments[...]
        self.query = query
    }

    /// The next segment, without taking it: to decide before consuming.
    public var first: String? { remaining.first }

    /// Takes the next segment.
    public mutating func next() -> String? {
        guard let segment = remaining.popFirst() else { return nil }
        consumed += 1
        return segment
    }
}

/// The route a deep-link hop takes.
public struct DeepLinkDecision: Sendable {
    /// The name of one of the type's routes; the host checks it exists and applies it like any route.
    public let route: String
    /// The route's params, checked against its declaration like a chain's.
    public let params: JSONValue?

    /// The route to take, and its params.
    public init(route: String, params: JSONValue? = nil) {
        self.route = route
        self.params = params
    }
}

/// Rejects a deep link in ``DeepLinkHandling/handleDeepLink(_:)``.
public struct DeepLinkRejection: Error, Sendable {
    /// Why the link is invalid: the message of the `-32014 deepLinkInvalid` the caller gets.
    public let reason: String
    /// A rejection with the reason a user or a log reader needs.
    public init(_ reason: String) { self.reason = reason }
}
