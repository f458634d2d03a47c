public import SwitchyardProtocol

/// A coordinator type: a flow that declares its routes and decides what each shows.
///
/// Write one as a `final class` conforming to ``StackCoordinator``, ``TabsCoordinator`` or
/// ``WrapperCoordinator``, declare routes with the property wrappers, and give it an `init()` that is cheap and has
/// no side effects (the runtime builds a prototype to read the declarations, and a fresh object per instance).
@MainActor
public protocol Coordinatable: AnyObject, RouteOutput {
    init()
    /// The type's name in the route table. Default: the class name without a `Coordinator` suffix, first letter
    /// lowercased (`TodosCoordinator` → `todos`).
    static var typeName: String { get }
    /// After the host created (or restored, or restarted) this instance.
    func didCreate(_ context: CreationContext)
    /// After the instance left the tree.
    func didDestroy()
    /// An entry of this instance left the tree (popped, dismissed, or removed by the user).
    func dismissed(route: String, entry: EntryID, reason: CoordinatorDismissedNotification.Reason)
}

/// Why and where an instance was created.
public struct CreationContext: Sendable {
    public let instance: InstanceID
    public let reason: CoordinatorCreateRequest.Reason
    public let params: JSONValue?
    public let parent: CoordinatorCreateRequest.Parent?
}

extension Coordinatable {
    public static var typeName: String {
        var name = String(describing: Self.self)
        if name.hasSuffix("Coordinator") && name != "Coordinator" { name.removeLast("Coordinator".count) }
        return name.prefix(1).lowercased() + name.dropFirst()
    }

    public func didCreate(_ context: CreationContext) {}
    public func didDestroy() {}
    public func dismissed(route: String, entry: EntryID, reason: CoordinatorDismissedNotification.Reason) {}

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
    typealias Route = StackRoute
    typealias Root = StackRoot
    /// The root to show when an instance is created. Default (nil): the first declared root without input.
    func initialRoot() -> RootSelection<Self>?
}

extension StackCoordinator {
    public func initialRoot() -> RootSelection<Self>? { nil }

    /// A root with its input, for ``initialRoot()``: `.root(\.authenticated, user)`.
    public func root<Input, Output>(_ keyPath: KeyPath<Self, StackRoot<Self, Input, Output>>, _ input: Input) -> RootSelection<Self> {
        RootSelection(route: self[keyPath: keyPath], input: input)
    }

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
    typealias Tab = TabRoute
    /// The tab selected at creation. Default (nil): the first.
    func initialTab() -> String?
    /// A tab was selected; `isRepeat` when it already was (Stinsen's `onTapped(isRepeat)`).
    func tabSelected(_ tab: String, isRepeat: Bool)
}

extension TabsCoordinator {
    public func initialTab() -> String? { nil }
    public func tabSelected(_ tab: String, isRepeat: Bool) {}

    /// The name of a tab, for ``initialTab()``: `tab(\.projects)`.
    public func tab<Output>(_ keyPath: KeyPath<Self, TabRoute<Self, Output>>) -> String { self[keyPath: keyPath].name }
}

/// Exactly one child (Stinsen's `ViewWrapperCoordinator` / `NavigationViewCoordinator`).
@MainActor
public protocol WrapperCoordinator: Coordinatable {
    typealias Child = ChildRoute
}

/// A coordinator with state the host keeps for it: returned with every answer, written to the state file, and handed
/// back when the instance is restored after a plugin restart.
///
/// In a target with main-actor default isolation, declare the state type `nonisolated struct State: Codable`, like
/// any plain data type.
@MainActor
public protocol StatefulCoordinator: Coordinatable {
    associatedtype State: Codable
    var state: State { get set }
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
    public private(set) var remaining: ArraySlice<String>
    public let query: [String: String]
    public private(set) var consumed = 0

    public init(segments: [String], query: [String: String] = [:]) {
        remaining = segments[...]
        self.query = query
    }

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
    public let route: String
    public let params: JSONValue?

    public init(route: String, params: JSONValue? = nil) {
        self.route = route
        self.params = params
    }
}

/// Rejects a deep link in ``DeepLinkHandling/handleDeepLink(_:)``.
public struct DeepLinkRejection: Error, Sendable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}
