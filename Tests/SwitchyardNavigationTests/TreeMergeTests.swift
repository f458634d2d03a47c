@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// A saved tree fitted to the route tables of a later version of the app (spec §17), without processes.
@Suite("Restoring a saved tree against changed route tables", .timeLimit(.minutes(1)))
struct TreeMergeTests {
    typealias Tables = [(plugin: String, coordinators: [CoordinatorDeclaration])]

    static let plugins: Set<String> = ["main", "unauthenticated", "authenticated", "todos", "projects"]

    /// `tables` with one type's declaration edited (set to nil: no longer declared).
    static func edited(_ plugin: String, _ type: String, _ edit: (inout CoordinatorDeclaration?) -> Void) -> Tables {
        edited(App.tables, plugin, type, edit)
    }

    static func edited(
        _ tables: Tables, _ plugin: String, _ type: String, _ edit: (inout CoordinatorDeclaration?) -> Void
    ) -> Tables {
        tables.map { entry in
            guard entry.plugin == plugin, let index = entry.coordinators.firstIndex(where: { $0.type == type }) else {
                return entry
            }
            var coordinators = entry.coordinators
            var declaration: CoordinatorDeclaration? = coordinators[index]
            edit(&declaration)
            if let declaration { coordinators[index] = declaration } else { coordinators.remove(at: index) }
            return (entry.plugin, coordinators)
        }
    }

    static func withoutRoute(_ name: String) -> (inout CoordinatorDeclaration?) -> Void {
        { $0?.routes.removeAll { $0.name == name } }
    }

    @Test("a tree the tables still declare whole is kept exactly, nothing dropped, nothing missing")
    func unchanged() throws {
        var app = try App()
        try app.logIn()
        try app.run([.route("todo", ["id": "1"]), .route("project", ["id": "p"])], from: app.id("todos", "todos"))
        let merge = app.tree.merged(with: app.registry, plugins: Self.plugins)
        #expect(merge.tree == app.tree && merge.dropped.isEmpty && merge.missing.isEmpty)
    }

    @Test(
        "a tab declared since the tree was saved is missing; the owner gives it, in declaration order, the selected tab kept"
    )
    func gainedTab() throws {
        var app = try App()
        app.registry = RouteRegistry(tables: Self.edited("authenticated", "home", Self.withoutRoute("projects")))
        try app.logIn()
        let home = app.id("authenticated", "home")
        try app.run([.selectTab("profile")], from: home)
        #expect(app.tree[home]?.tabs.map(\.route) == ["todos", "profile"])
        let saved = app.tree

        app.registry = RouteRegistry(tables: App.tables)
        let merge = saved.merged(with: app.registry, plugins: Self.plugins)
        #expect(merge.tree == saved && merge.dropped.isEmpty)
        #expect(merge.missing == [.tab(home, route: "projects")])

        let runner = try ChainRunner.addingTab(
            tree: merge.tree, registry: app.registry, allocator: app.allocator, instance: home, tab: "projects")
        let result = try app.drive(runner)
        try app.tree.commit(result, startedFrom: saved)
        let tabs = try #require(app.tree[home])
        #expect(tabs.tabs.map(\.route) == ["todos", "projects", "profile"])
        #expect(tabs.selectedTabEntry?.route == "profile")
        #expect(tabs.tabs.filter { $0.route != "projects" } == saved[home]?.tabs)
        #expect(
            app.tree[try #require(tabs.tabs[1].content.coordinator)]?.root?.route == "list",
            "created as a new tab's would be")
        guard case .route(let question)? = app.asked.last(where: { if case .route = $0 { true } else { false } }) else {
            Issue.record("the owner was not asked: \(app.asked)")
            return
        }
        #expect(question.instance == home && question.route == "projects" && question.transition == .tab)
        app.checkInvariants()
        #expect(throws: ResponseError.self) {
            try ChainRunner.addingTab(
                tree: app.tree, registry: app.registry, allocator: app.allocator, instance: home, tab: "projects")
        }
    }

    @Test(
        "tabs the owner set at run time (setTabs) are kept as they are: their order, and no declared tab asked for again"
    )
    func dynamicTabsKept() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        try app.run([.setTabs(["profile", "todos"])], from: home)
        let saved = app.tree
        #expect(saved[home]?.dynamicTabs == true)
        let merge = saved.merged(with: app.registry, plugins: Self.plugins)
        #expect(merge.tree == saved && merge.dropped.isEmpty && merge.missing.isEmpty)
        // Through a state file (a snapshot) too.
        let restored = try NavigationTree(snapshot: saved.snapshot(availability: { _ in (.ok, nil) }))
        #expect(restored[home]?.tabs.map(\.route) == ["profile", "todos"] && restored[home]?.dynamicTabs == true)
    }

    @Test(
        "entries, tabs and types no longer declared are dropped, deepest first, each named with why; a stack loses what is above"
    )
    func droppedParts() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        let todos = app.id("todos", "todos")
        try app.run([.route("todo", ["id": "1"]), .route("project", ["id": "p"])], from: todos)
        let project = app.id("projects", "project")
        try app.run([.route("members")], from: project)
        try app.run([.route("createTodo"), .route("todo", ["id": "2"])], from: todos)
        let entries = try #require(app.tree[todos]?.entries)
        let profileTab = try #require(app.tree[home]?.tabs.last)
        let saved = app.tree

        var tables = Self.edited("projects", "project") { $0 = nil }
        tables = Self.edited(tables, "authenticated", "home", Self.withoutRoute("profile"))
        let merge = saved.merged(with: RouteRegistry(tables: tables), plugins: Self.plugins)
        #expect(
            merge.dropped.map(\.description) == [
                "instance projects.project\(project): plugin 'projects' no longer declares the type 'project'",
                "entry 'todo' [\(entries[3].id)] of todos.todos\(todos): above a dropped entry",
                "entry 'createTodo' [\(entries[2].id)] of todos.todos\(todos): above a dropped entry",
                "entry 'project' [\(entries[1].id)] of todos.todos\(todos): its coordinator was dropped",
                "entry 'profile' [\(profileTab.id)] of authenticated.home\(home): authenticated.home no longer declares the tab 'profile'",
            ])
        #expect(merge.missing.isEmpty)
        #expect(merge.tree[todos]?.entries == [entries[0]])
        #expect(merge.tree[home]?.tabs.map(\.route) == ["todos", "projects"])
        #expect(merge.tree[project] == nil && merge.tree.count == saved.count - 1)
        #expect(merge.tree.revision == saved.revision + 1)
    }

    @Test("a stack whose root route is gone loses its content, which its owner gives afresh (restart)")
    func rootGone() throws {
        var app = try App()
        let unauthenticated = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("registration")], from: unauthenticated)
        let registration = app.id("unauthenticated", "registration")
        let saved = app.tree
        app.registry = RouteRegistry(
            tables: Self.edited("unauthenticated", "unauthenticated") { declaration in
                declaration?.initialRoute = "signIn"
                declaration?.routes[0].name = "signIn"
            })
        let merge = saved.merged(with: app.registry, plugins: Self.plugins)
        #expect(merge.missing == [.content(unauthenticated)])
        #expect(
            merge.dropped.map(\.description) == [
                "instance unauthenticated.registration\(registration): held by a dropped entry",
                "entry 'registration' [\(saved[unauthenticated]?.entries.first?.id ?? EntryID(0))] of unauthenticated.unauthenticated\(unauthenticated): above a dropped root",
                "entry 'login' [\(saved[unauthenticated]?.root?.id ?? EntryID(0))] of unauthenticated.unauthenticated\(unauthenticated): unauthenticated.unauthenticated no longer declares the route 'login'",
            ])
        #expect(merge.tree[unauthenticated]?.allEntries.isEmpty == true)

        let runner = ChainRunner(
            tree: merge.tree, registry: app.registry, allocator: app.allocator, start: unauthenticated,
            steps: [.restart])
        let result = try app.drive(runner)
        app.tree = merge.tree
        try app.tree.commit(result, startedFrom: merge.tree)
        #expect(app.tree[unauthenticated]?.root?.route == "signIn")
        app.checkInvariants()
    }

    @Test("a changed kind or a plugin the manifest no longer names drops the instance; its tab is given afresh")
    func kindAndPlugin() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        let navigation = app.id("todos", "navigation")
        let projects = app.id("projects", "projects")
        let tables = Self.edited("todos", "navigation") { declaration in
            declaration = CoordinatorDeclaration(
                type: "navigation", kind: .stack, initialRoute: "start",
                routes: [RouteDeclaration(name: "start", transition: .root)])
        }
        let merge = app.tree.merged(
            with: RouteRegistry(tables: tables), plugins: Self.plugins.subtracting(["projects"]))
        let reasons = Dictionary(
            merge.dropped.compactMap { dropped -> (InstanceID, String)? in
                if case .instance(let id, _, _) = dropped.part { (id, dropped.reason) } else { nil }
            }, uniquingKeysWith: { first, _ in first })
        #expect(reasons[navigation] == "todos.navigation is now a stack coordinator, the saved one a wrapper")
        #expect(reasons[projects] == "the manifest no longer names plugin 'projects'")
        #expect(reasons[app.id("todos", "todos")] == "below a dropped instance")
        #expect(merge.missing == [.tab(home, route: "todos"), .tab(home, route: "projects")])
        #expect(merge.tree[home]?.tabs.map(\.route) == ["profile"])
    }

    @Test("what belongs to a plugin whose table is unknown (not serving) is kept as saved, with everything below it")
    func unknownTableKept() throws {
        var app = try App()
        try app.logIn()
        try app.run([.route("todo", ["id": "1"])], from: app.id("todos", "todos"))
        var registry = app.registry
        registry.remove(plugin: "todos")
        let merge = app.tree.merged(with: registry, plugins: Self.plugins)
        #expect(merge.tree == app.tree && merge.dropped.isEmpty && merge.missing.isEmpty)
    }

    @Test("a placeholder of a declared type is kept (to be created); of a type no longer declared, dropped")
    func placeholders() throws {
        let app = try App.signedIn(without: "projects")
        let placeholder = app.id("projects", "projects")
        let kept = app.tree.merged(with: RouteRegistry(tables: App.tables), plugins: Self.plugins)
        #expect(kept.tree == app.tree && kept.dropped.isEmpty)
        let gone = app.tree.merged(
            with: RouteRegistry(tables: Self.edited("projects", "projects") { $0 = nil }), plugins: Self.plugins)
        #expect(gone.tree[placeholder] == nil)
        #expect(
            gone.dropped.first?.description
                == "instance projects.projects\(placeholder): plugin 'projects' no longer declares the type 'projects'")
    }

    @Test("instances the root does not reach are dropped")
    func unreachable() throws {
        var app = try App()
        try app.logIn()
        var snapshot = app.tree.snapshot()
        snapshot.instances.append(InstanceSnapshot(id: InstanceID(999), plugin: "main", type: "main", kind: .stack))
        let saved = try NavigationTree(snapshot: snapshot)
        let merge = saved.merged(with: app.registry, plugins: Self.plugins)
        #expect(merge.dropped.map(\.description) == ["instance main.main#999: the root does not reach it"])
        #expect(merge.tree[InstanceID(999)] == nil)
    }
}
