@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// A coordinator's initial content (a tab, a stack's root, a wrapper's child) whose plugin does not serve becomes a
/// placeholder instead of failing the coordinator; it is created once the plugin serves.
@Suite("Placeholders for plugins that do not serve", .timeLimit(.minutes(1)))
struct PlaceholderTests {
    /// A plugin that is known but not serving: its creations fail as the host fails them without a connection.
    static func down(_ plugin: String) -> (ChainNeed) -> ChainAnswer? {
        { need in
            guard case .create(let question) = need, question.plugin == plugin else { return nil }
            return .create(.failure(.pluginUnavailable(plugin, "it is not running")))
        }
    }

    @Test("a tab whose plugin's table is unknown is a placeholder: the others are created, nothing is asked of it")
    func unknownPlugin() throws {
        let app = try App.signedIn(without: "projects")
        let home = try #require(app.instance("authenticated", "home"))
        #expect(home.tabs.map(\.route) == ["todos", "projects", "profile"])
        let id = try #require(home.tabs[1].content.coordinator)
        let placeholder = try #require(app.tree[id])
        #expect(
            placeholder.isPending && placeholder.plugin == "projects" && placeholder.type == "projects"
                && placeholder.allEntries.isEmpty)
        #expect(app.instance("todos", "todos") != nil, "the other tabs were created")
        #expect(!app.asked.contains { $0.plugin == "projects" })
        app.checkInvariants()

        let snapshot = try #require(app.tree.snapshot().instance(id))
        #expect(snapshot.pending == true && snapshot.kind == nil && snapshot.status == .unavailable)
        #expect(snapshot.unavailableReason == "plugin 'projects' has not created it yet")
        let down = app.tree.snapshot { plugin in
            plugin == "projects" ? (.unavailable, "plugin 'projects' failed: boom") : (.ok, nil)
        }
        #expect(down.instance(id)?.unavailableReason == "plugin 'projects' failed: boom")
        #expect(
            try NavigationTree(snapshot: app.tree.snapshot()).snapshot() == app.tree.snapshot(),
            "kept through a state file")
    }

    @Test("a tab whose plugin is known but down is a placeholder too; the chain that opened it commits without it")
    func knownPluginDown() throws {
        var app = try App()
        app.loggedIn = true
        let result = try app.run([.setRoot("authenticated")], override: Self.down("projects"))
        let home = try #require(app.instance("authenticated", "home"))
        let id = try #require(home.tabs[1].content.coordinator)
        #expect(app.tree[id]?.isPending == true)
        #expect(!result.created.contains(id), "never created, so never destroyed")
        #expect(app.asked.contains { if case .create(let question) = $0 { question.instance == id } else { false } })
        app.checkInvariants()
    }

    @Test(
        "selecting the tab lands on the placeholder; navigating into it fails with pluginUnavailable and changes nothing"
    )
    func navigationIntoPlaceholder() throws {
        var app = try App.signedIn(without: "projects")
        let home = app.id("authenticated", "home")
        let id = app.id("projects", "projects")
        #expect(try app.run([.selectTab("projects")], from: home).landedOn == id)
        #expect(app.tree.topCoordinator(from: app.tree.rootID ?? home) == id)
        #expect(try app.tree.currentRoute(id) == nil)
        expectUnchanged(&app, .pluginUnavailable) { app throws(ResponseError) in
            try app.run([.route("project", ["id": "1"])], from: id)
        }
        expectUnchanged(&app, .pluginUnavailable) { app throws(ResponseError) in
            try app.run([.selectTab("projects"), .popToRoot], from: home)
        }
        // A deep link through it is refused when it is resolved (the dry run of `validate` too), however well its
        // plugin's table would match the rest of the link.
        app.registry = RouteRegistry(tables: App.tables)
        let link = try DeepLinkURL(parsing: "switchyard://projects/p1", limits: .defaults)
        guard
            case .invalid(let refusal) = DeepLinkResolver(link: link, tree: app.tree, registry: app.registry).advance()
        else {
            Issue.record("a link through the placeholder resolved")
            return
        }
        #expect(refusal.code == .pluginUnavailable, "\(refusal)")
        do throws(ResponseError) {
            try app.run([.route("project", ["id": "1"])], from: id)
        } catch {
            #expect(
                error.message.contains("plugin 'projects'") && error.message.contains("placeholder"), "\(error.message)"
            )
            #expect(error.data?["instance"] == .int(id.rawValue))
        }
    }

    @Test("a route the user takes to a plugin that is down still fails: only initial content degrades")
    func userRouteFails() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        expectUnchanged(&app, .pluginUnavailable) { app throws(ResponseError) in
            try app.run([.route("project", ["id": "p1"])], from: todos, override: Self.down("projects"))
        }
    }

    @Test("a placeholder is created in its plugin once it serves: reason new, its params and its place; same id")
    func createdWhenServing() throws {
        var app = try App.signedIn(without: "projects")
        let id = app.id("projects", "projects")
        let home = app.id("authenticated", "home")
        app.registry = RouteRegistry(tables: App.tables)
        let base = app.tree
        let runner = try ChainRunner.creatingPlaceholder(
            tree: base, registry: app.registry, allocator: app.allocator, instance: id)
        let result = try app.drive(runner)
        try app.tree.commit(result, startedFrom: base)
        #expect(app.tree.revision == base.revision + 1)
        let created = try #require(app.tree[id])
        #expect(!created.isPending && created.kind == .stack && created.root?.route == "list")
        guard case .create(let question)? = app.asked.last else {
            Issue.record("no creation asked: \(app.asked)")
            return
        }
        #expect(question.instance == id && question.reason == .new)
        #expect(
            question.parent
                == CoordinatorCreateRequest.Parent(instance: home, plugin: "authenticated", route: "projects"))
        app.checkInvariants()
        #expect(throws: ResponseError.self) {
            try ChainRunner.creatingPlaceholder(
                tree: app.tree, registry: app.registry, allocator: app.allocator, instance: id)
        }
    }

    @Test("a placeholder that leaves the tree gets no coordinator/destroy: its plugin never created it")
    func noDestroyForPlaceholder() throws {
        var app = try App.signedIn(without: "projects")
        let id = app.id("projects", "projects")
        let others = [app.id("authenticated", "home"), app.id("todos", "navigation"), app.id("todos", "todos")]
        let result = try app.run([.setRoot("unauthenticated")])
        let destroyed = result.effects.compactMap { effect -> InstanceID? in
            if case .destroy(let instance, _, _) = effect { instance } else { nil }
        }
        #expect(app.tree[id] == nil && !destroyed.contains(id))
        #expect(Set(destroyed) == Set(others), "every other instance of the subtree is destroyed")
    }
}

/// The composition check finds cycles of declared initial content; a plugin can still answer `coordinator/create`
/// with another root than its `initialRoute` and open itself again. The chain bounds that nesting.
@Suite("Initial content nesting", .timeLimit(.minutes(1)))
struct InitialNestingTests {
    @Test(
        "a coordinator whose create answer opens itself again fails at maxInitialNesting with limitExceeded and the path"
    )
    func selfOpeningCreateAnswer() throws {
        var app = try App()
        app.registry.add(
            plugin: "looper",
            coordinators: [
                CoordinatorDeclaration(
                    type: "loop", kind: .stack, initialRoute: "plain",
                    routes: [
                        RouteDeclaration(name: "plain", transition: .root),
                        RouteDeclaration(name: "again", transition: .root, target: CoordinatorReference(type: "loop")),
                    ])
            ])
        let runner = ChainRunner.creatingRoot(
            tree: NavigationTree(), registry: app.registry, allocator: app.allocator,
            root: .init(plugin: "looper", type: "loop"))
        let failure = app.failure(of: runner) { need in
            guard case .create(let question) = need, question.plugin == "looper" else { return nil }
            return .create(
                .success(
                    .init(
                        root: .init(
                            route: "again", content: .coordinator(CoordinatorReference(type: "loop"), params: nil)))))
        }
        let error = try #require(failure?.error)
        #expect(error.code == .limitExceeded)
        #expect(error.data?["limit"] == "maxInitialNesting")
        #expect(error.message.contains("looper.loop → looper.loop"), "\(error.message)")
        #expect(app.asked.count <= ChainRunner.maxInitialNesting + 2, "it stopped at the bound, not at maxInstances")
    }
}
