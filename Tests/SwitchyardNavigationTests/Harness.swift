@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// The Stinsen example app's shape as route tables, and scripted plugin answers: unit tests of the pure tree answer
/// the chain runner's questions synchronously. (Integration tests use the real plugin processes.)
struct App {
    static let tables: [(plugin: String, coordinators: [CoordinatorDeclaration])] = [
        (
            "main",
            [
                CoordinatorDeclaration(
                    type: "main", kind: .stack, initialRoute: "unauthenticated",
                    routes: [
                        RouteDeclaration(
                            name: "unauthenticated", transition: .root, deepLink: "login",
                            target: CoordinatorReference(plugin: "unauthenticated", type: "unauthenticated")),
                        RouteDeclaration(
                            name: "authenticated", transition: .root, deepLink: "",
                            params: [ParamDeclaration(name: "user", type: .string, required: false)],
                            target: CoordinatorReference(plugin: "authenticated", type: "home")),
                        RouteDeclaration(
                            name: "guest", transition: .root, deepLink: "guest",
                            params: [ParamDeclaration(name: "name", type: .string)]),
                        RouteDeclaration(name: "about", transition: .modal, deepLink: "about"),
                    ])
            ]
        ),
        (
            "unauthenticated",
            [
                CoordinatorDeclaration(
                    type: "unauthenticated", kind: .stack, initialRoute: "login",
                    routes: [
                        RouteDeclaration(name: "login", transition: .root),
                        RouteDeclaration(name: "forgotPassword", transition: .modal, deepLink: "forgot"),
                        RouteDeclaration(
                            name: "registration", transition: .push, deepLink: "register",
                            target: CoordinatorReference(type: "registration")),
                    ]),
                CoordinatorDeclaration(
                    type: "registration", kind: .stack, initialRoute: "start",
                    routes: [
                        RouteDeclaration(name: "start", transition: .root),
                        RouteDeclaration(name: "terms", transition: .modal),
                        RouteDeclaration(name: "confirm", transition: .push),
                    ]),
            ]
        ),
        (
            "authenticated",
            [
                CoordinatorDeclaration(
                    type: "home", kind: .tabs, initialRoute: "todos",
                    routes: [
                        RouteDeclaration(
                            name: "todos", transition: .tab, deepLink: "todos",
                            target: CoordinatorReference(plugin: "todos", type: "navigation")),
                        RouteDeclaration(
                            name: "projects", transition: .tab, deepLink: "projects",
                            target: CoordinatorReference(plugin: "projects", type: "projects")),
                        RouteDeclaration(name: "profile", transition: .tab, deepLink: "profile"),
                    ])
            ]
        ),
        (
            "todos",
            [
                CoordinatorDeclaration(
                    type: "navigation", kind: .wrapper,
                    routes: [
                        RouteDeclaration(
                            name: "content", transition: .child, target: CoordinatorReference(type: "todos"))
                    ]),
                CoordinatorDeclaration(
                    type: "todos", kind: .stack, initialRoute: "list",
                    routes: [
                        RouteDeclaration(name: "list", transition: .root),
                        RouteDeclaration(
                            name: "todo", transition: .push, deepLink: "todo/:id",
                            params: [ParamDeclaration(name: "id", type: .string)]),
                        RouteDeclaration(name: "createTodo", transition: .modal, deepLink: "new"),
                        RouteDeclaration(
                            name: "share", transition: .fullScreen, deepLink: "share/:id",
                            params: [ParamDeclaration(name: "id", type: .integer)]),
                        RouteDeclaration(
                            name: "project", transition: .push, deepLink: "project/:id",
                            params: [ParamDeclaration(name: "id", type: .string)],
                            target: CoordinatorReference(plugin: "projects", type: "project")),
                    ]),
            ]
        ),
        (
            "projects",
            [
                CoordinatorDeclaration(
                    type: "projects", kind: .stack, initialRoute: "list",
                    routes: [
                        RouteDeclaration(name: "list", transition: .root),
                        RouteDeclaration(
                            name: "project", transition: .push, deepLink: ":id",
                            params: [ParamDeclaration(name: "id", type: .string)],
                            target: CoordinatorReference(type: "project")),
                    ]),
                CoordinatorDeclaration(
                    type: "project", kind: .stack, initialRoute: "overview",
                    routes: [
                        RouteDeclaration(name: "overview", transition: .root),
                        RouteDeclaration(name: "members", transition: .push, deepLink: "members"),
                    ]),
            ]
        ),
    ]

    var registry = RouteRegistry(tables: App.tables)
    var tree = NavigationTree()
    let allocator = IDAllocator()
    /// The guard: `main` refuses the authenticated root until this is true.
    var loggedIn = false
    /// Every question the plugins were asked, in order.
    var asked: [ChainNeed] = []

    init() throws {
        let runner = ChainRunner.creatingRoot(
            tree: tree, registry: registry, allocator: allocator, root: .init(plugin: "main", type: "main"))
        let result = try drive(runner)
        try tree.commit(result, startedFrom: NavigationTree())
    }

    /// The plugins' decisions.
    func answer(_ need: ChainNeed) -> ChainAnswer {
        switch need {
        case .route(let question):
            if question.plugin == "main" && question.route == "authenticated" && !loggedIn {
                return .route(.failure(ResponseError(.rejectedByGuard, "not logged in", data: ["plugin": "main"])))
            }
            let declaration = registry.declaration(plugin: question.plugin, type: question.type)?.route(
                named: question.route)
            if let target = declaration?.target {
                return .route(.success(.init(content: .coordinator(target, params: question.params))))
            }
            return .route(
                .success(.init(content: .screen(ScreenDescriptor(name: question.route, props: question.params)))))
        case .create(let question):
            guard let declaration = registry.declaration(plugin: question.plugin, type: question.type) else {
                return .create(.failure(.pluginUnavailable(question.plugin, "gone")))
            }
            func content(_ route: RouteDeclaration) -> RouteContent {
                route.target.map { .coordinator($0, params: nil) } ?? .screen(ScreenDescriptor(name: route.name))
            }
            switch declaration.kind {
            case .stack:
                let root = declaration.route(named: declaration.initialRoute ?? "")!
                return .create(.success(.init(root: .init(route: root.name, content: content(root)))))
            case .tabs:
                let tabs = declaration.routes.filter { $0.transition == .tab }.map {
                    CoordinatorCreateRequest.Tab(route: $0.name, content: content($0))
                }
                return .create(.success(.init(tabs: tabs)))
            case .wrapper:
                return .create(.success(.init(child: content(declaration.routes[0]))))
            }
        }
    }

    /// Runs a runner to its end, answering every question.
    mutating func drive(
        _ runner: ChainRunner, override: ((ChainNeed) -> ChainAnswer?)? = nil
    ) throws(ResponseError) -> ChainResult {
        while true {
            switch runner.advance() {
            case .done(let result): return result
            case .failed(let failure): throw failure.error
            case .needs(let need):
                asked.append(need)
                runner.resume(with: override?(need) ?? answer(need))
            }
        }
    }

    /// Runs a runner to its end like ``drive(_:override:)``; returns how it failed, or nil if it did not.
    mutating func failure(of runner: ChainRunner, override: ((ChainNeed) -> ChainAnswer?)? = nil) -> ChainFailure? {
        while true {
            switch runner.advance() {
            case .done: return nil
            case .failed(let failure): return failure
            case .needs(let need):
                asked.append(need)
                runner.resume(with: override?(need) ?? answer(need))
            }
        }
    }

    /// Runs a chain from `start` (default: the root) and commits it. Returns the result.
    @discardableResult
    mutating func run(
        _ steps: [NavigationStep], from start: InstanceID? = nil, as requester: Requester = .control,
        reason: CoordinatorDismissedNotification.Reason = .navigation, override: ((ChainNeed) -> ChainAnswer?)? = nil
    ) throws(ResponseError) -> ChainResult {
        let base = tree
        let runner = ChainRunner(
            tree: base, registry: registry, allocator: allocator, requester: requester,
            start: start ?? tree.rootID ?? InstanceID(0), steps: steps, dismissReason: reason)
        let result = try drive(runner, override: override)
        try tree.commit(result, startedFrom: base)
        return result
    }

    /// Logs in and switches the root to the authenticated tabs.
    mutating func logIn() throws {
        loggedIn = true
        try run([.setRoot("authenticated")])
    }

    /// An app signed in while `plugin`'s route table is unknown (missing at start): its tab is a placeholder.
    static func signedIn(without plugin: String) throws -> App {
        var app = try App()
        app.registry.remove(plugin: plugin)
        try app.logIn()
        return app
    }

    // MARK: Lookups

    func instance(_ plugin: String, _ type: String) -> Instance? {
        tree.allInstances.filter { $0.plugin == plugin && $0.type == type }.min { $0.id < $1.id }
    }

    func id(_ plugin: String, _ type: String) -> InstanceID {
        instance(plugin, type)?.id ?? InstanceID(-1)
    }

    var snapshotJSON: String { TreeRenderer.json(tree.snapshot()) }

    /// Checks the structural invariants every tree must keep.
    func checkInvariants(sourceLocation: SourceLocation = #_sourceLocation) {
        var referenced: [InstanceID: Int] = [:]
        var entryIDs = Set<EntryID>()
        for instance in tree.allInstances {
            for entry in instance.allEntries {
                #expect(
                    entryIDs.insert(entry.id).inserted, "entry id \(entry.id) used twice",
                    sourceLocation: sourceLocation)
                if let child = entry.content.coordinator {
                    referenced[child, default: 0] += 1
                    #expect(
                        tree[child]?.parent == InstanceSnapshot.ParentLink(instance: instance.id, entry: entry.id),
                        "child \(child) does not point back to \(instance.id)/\(entry.id)",
                        sourceLocation: sourceLocation)
                }
            }
            switch instance.kind {
            case .stack:
                #expect(
                    instance.root != nil && instance.tabs.isEmpty && instance.child == nil,
                    sourceLocation: sourceLocation)
            case .tabs:
                #expect(
                    !instance.tabs.isEmpty && instance.root == nil && instance.entries.isEmpty,
                    sourceLocation: sourceLocation)
            case .wrapper:
                #expect(
                    instance.child != nil && instance.root == nil && instance.entries.isEmpty,
                    sourceLocation: sourceLocation)
            case nil:
                #expect(instance.allEntries.isEmpty, "a placeholder holds nothing", sourceLocation: sourceLocation)
            }
        }
        for instance in tree.allInstances where instance.id != tree.rootID {
            #expect(
                referenced[instance.id] == 1, "instance \(instance.id) has \(referenced[instance.id] ?? 0) parents",
                sourceLocation: sourceLocation)
        }
        #expect(
            referenced[tree.rootID ?? InstanceID(-1)] == nil, "the root has a parent", sourceLocation: sourceLocation)
    }
}

/// A failure whose tree must be left byte-identical.
func expectUnchanged(
    _ app: inout App, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (inout App) throws(ResponseError) -> Void
) {
    let before = app.snapshotJSON
    let revision = app.tree.revision
    do {
        try body(&app)
        Issue.record("expected \(code.name), but it succeeded", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, "expected \(code.name), got \(error)", sourceLocation: sourceLocation)
    }
    #expect(app.snapshotJSON == before, "the tree changed after a failed operation", sourceLocation: sourceLocation)
    #expect(app.tree.revision == revision, sourceLocation: sourceLocation)
}
