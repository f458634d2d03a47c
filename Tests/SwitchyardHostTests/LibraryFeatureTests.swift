import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// What the four reference libraries express beyond Stinsen (Protocol/README.md §12.4–§12.9), through the real host
/// and the demo's plugins, one per SDK: the Swift todos and tab bar, the Python profile and the Node projects.
@Suite("The reference libraries' features across plugin processes", .heavy, .timeLimit(.minutes(1)))
struct LibraryFeatureTests {
    @Test(
        "each SDK's coordinator answers its screen's action with steps, applied as one revision; undeclared ones are refused",
        arguments: Tier.selected)
    func actionsInEverySDK(_ tier: Tier) async throws {
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot, logs: logs) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            var tree = await host.snapshot()

            // Swift: the todo screen's "complete" pops it (the demo's todos coordinator).
            let todos = try #require(tree.find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "1"]), .route("todo", ["id": "7"])])
            let first = try #require(await host.snapshot().instance(todos.id)?.entries?.first?.entry)
            var before = await host.snapshot().revision
            var result = try await host.userAction(
                instance: todos.id, entry: first, action: "complete", params: ["id": "1"])
            #expect(result.revision == before + 1)
            tree = await host.snapshot()
            #expect(tree.instance(todos.id)?.entries?.isEmpty == true)
            // In the same revision, the todos tab's badge (another plugin's tab bar) counts the open todos.
            #expect(tree.find("authenticated", "home")?.tabs?.first { $0.route == "todos" }?.badge == "3")

            // Python: settings' "save" (with a declared optional param) pops the settings screen.
            let profile = try #require(tree.find("profile", "profile"))
            _ = try await host.navigate(from: profile.id, [.route("settings")])
            let settings = try #require(await host.snapshot().instance(profile.id)?.entries?.last?.entry)
            result = try await host.userAction(
                instance: profile.id, entry: settings, action: "save", params: ["theme": "dark"])
            #expect(await host.snapshot().instance(profile.id)?.entries?.isEmpty == true)
            try await logs.waitFor("[profile] profile: settings saved (dark)")

            // Node: members' "showOwner" routes to another plugin's coordinator; settings' "close" dismisses it.
            let projects = try #require(tree.find("projects", "projects"))
            let project = try await host.navigate(
                from: projects.id, [.route("project", ["id": "p1"]), .route("members")]
            ).instance
            let members = try #require(await host.snapshot().instance(project)?.entries?.last?.entry)
            result = try await host.userAction(instance: project, entry: members, action: "showOwner")
            tree = await host.snapshot()
            #expect(tree.instance(result.instance)?.plugin == "profile")
            #expect(tree.instance(project)?.entries?.map(\.route) == ["members", "owner"])
            _ = try await host.navigate(from: project, [.popToRoot, .route("settings")])
            let sheet = try #require(await host.snapshot().instance(project)?.entries?.last?.entry)
            _ = try await host.userAction(instance: project, entry: sheet, action: "close")
            #expect(await host.snapshot().instance(project)?.entries?.isEmpty == true)

            // Refusals change nothing and reach no plugin: an undeclared action, params of the wrong type.
            _ = try await host.navigate(from: profile.id, [.route("settings")])
            let again = try #require(await host.snapshot().instance(profile.id)?.entries?.last?.entry)
            let root = try #require(await host.snapshot().instance(todos.id)?.root?.entry)
            before = await host.snapshot().revision
            let undeclared = await #expect(throws: ResponseError.self) {
                try await host.userAction(instance: todos.id, entry: root, action: "complete")
            }
            #expect(
                undeclared?.code == .invalidParams && undeclared?.data?["field"] == "action",
                "\(String(describing: undeclared))")
            let mistyped = await #expect(throws: ResponseError.self) {
                try await host.userAction(instance: profile.id, entry: again, action: "save", params: ["theme": 3])
            }
            #expect(
                mistyped?.code == .invalidParams && mistyped?.data?["field"] == "params",
                "\(String(describing: mistyped))")
            let gone = await #expect(throws: ResponseError.self) {
                try await host.userAction(instance: profile.id, entry: settings, action: "save")
            }
            #expect(gone?.code == .instanceNotFound)
            #expect(await host.snapshot().revision == before)
        }
    }

    @Test(
        "the demo's tab bar starts without its inbox; setTabs adds it (the Swift owner's @Tab answers), reorders, and removing the selected tab selects a neighbour",
        arguments: Tier.selected)
    func dynamicTabs(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            var home = try #require(await host.snapshot().find("authenticated", "home"))
            #expect(home.tabs?.map(\.route) == ["todos", "projects", "profile"])
            #expect(home.dynamicTabs == true)
            let before = await host.snapshot().revision
            _ = try await host.navigate(
                from: home.id,
                [
                    .selectTab("profile"), .parent, .setTabs(["inbox", "todos", "projects", "profile"]),
                    .setBadge("inbox", "new"),
                ])
            var tree = await host.snapshot()
            #expect(tree.revision == before + 1)
            home = try #require(tree.instance(home.id))
            #expect(home.tabs?.map(\.route) == ["inbox", "todos", "projects", "profile"])
            #expect(home.tabs?.first?.content == .screen(ScreenDescriptor(name: "Inbox")))
            #expect(home.tabs?.first?.badge == "new")
            #expect(home.selectedTab == "profile")
            #expect(await host.render(.text).contains("tab inbox (new)"))
            // The profile tab (selected) leaves with its coordinator (Python); its next neighbour that stays is none,
            // so the previous one, projects, is selected.
            let profile = try #require(tree.find("profile", "profile"))
            _ = try await host.navigate(from: home.id, [.setTabs(["inbox", "todos", "projects"])])
            tree = await host.snapshot()
            #expect(tree.instance(home.id)?.selectedTab == "projects")
            #expect(tree.instance(profile.id) == nil)
        }
    }

    @Test(
        "per-call presentation and presentation options, declared in each SDK: a transition picked per call, options in snapshots and renderings, a sheet the user cannot dismiss",
        arguments: Tier.selected)
    func presentation(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            let tree = await host.snapshot()
            // Python: the delete-account sheet is declared half-height and not dismissible by the user.
            let profile = try #require(tree.find("profile", "profile"))
            _ = try await host.navigate(from: profile.id, [.route("deleteAccount")])
            let sheet = try #require(await host.snapshot().instance(profile.id)?.entries?.last)
            #expect(sheet.presentation == PresentationOptions(detents: ["medium"], interactiveDismissDisabled: true))
            let refusal = await #expect(throws: ResponseError.self) {
                try await host.userDismissed(instance: profile.id, entry: sheet.entry)
            }
            #expect(
                refusal?.code == .notAllowed && refusal?.data?["entry"] == .int(sheet.entry.rawValue),
                "\(String(describing: refusal))")
            #expect(await host.render(.text).contains("{detents: medium; no interactive dismiss}"))
            _ = try await host.navigate(from: profile.id, [.popLast])
            // Swift: createTodo is a sheet by default, full screen when the call says so; its declared options stay.
            let todos = try #require(tree.find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("createTodo", as: .fullScreen)])
            let created = try #require(await host.snapshot().instance(todos.id)?.entries?.last)
            #expect(created.transition == .fullScreen && created.presentation?.customTransition == "slideUp")
            await #expect(throws: ResponseError.self) {
                try await host.navigate(from: todos.id, [.route("createTodo", as: .push)])
            }
            // Node: the project settings, full screen with options of this call replacing the declared detents.
            let projects = try #require(tree.find("projects", "projects"))
            let project = try await host.navigate(from: projects.id, [.route("project", ["id": "p1"])]).instance
            _ = try await host.navigate(
                from: project,
                [.route("settings", as: .fullScreen, presentation: PresentationOptions(customTransition: "zoom"))])
            let settings = try #require(await host.snapshot().instance(project)?.entries?.last)
            #expect(
                settings.transition == .fullScreen
                    && settings.presentation == PresentationOptions(customTransition: "zoom"))
            _ = try await host.userDismissed(instance: project, entry: settings.entry)
        }
    }

    @Test(
        "coordinator/appeared reaches the owners that declare appearance, in Swift, Python and Node, when what was above their entry leaves",
        arguments: Tier.selected)
    func appearance(_ tier: Tier) async throws {
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot, logs: logs) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            let tree = await host.snapshot()
            let todos = try #require(tree.find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "7"]), .popLast])
            let list = try #require(tree.instance(todos.id)?.root?.entry)
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "7"])])
            _ = try await host.navigate(from: todos.id, [.popLast])
            try await logs.waitFor("[todos] todos: entry \(list) appeared")
            let profile = try #require(tree.find("profile", "profile"))
            _ = try await host.navigate(from: profile.id, [.route("settings")])
            _ = try await host.navigate(from: profile.id, [.popLast])
            try await logs.waitFor(
                "[profile] profile: entry \(try #require(tree.instance(profile.id)?.root?.entry).rawValue) appeared")
            try await logs.waitFor("[profile] profile: 0 presented")
            let projects = try #require(tree.find("projects", "projects"))
            let project = try await host.navigate(
                from: projects.id, [.route("project", ["id": "p1"]), .route("members")]
            ).instance
            let overview = try #require(await host.snapshot().instance(project)?.root?.entry)
            _ = try await host.navigate(from: project, [.popLast])
            try await logs.waitFor("[projects] projects: entry \(overview.rawValue) appeared")
        }
    }

    @Test(
        "library steps through the demo: forcePresent from a tab not shown, popPath of a pushed flow's only screen, popPushed under a sheet",
        arguments: Tier.selected)
    func librarySteps(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            var tree = await host.snapshot()
            let home = try #require(tree.find("authenticated", "home"))
            let todos = try #require(tree.find("todos", "todos"))
            let profile = try #require(tree.find("profile", "profile"))
            let projects = try #require(tree.find("projects", "projects"))
            // SUICoordinator's forcePresentation: from a tab that is not shown, the sheet is presented and its tab selected.
            _ = try await host.navigate(from: home.id, [.selectTab("profile")])
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "7"]), .forcePresent("createTodo")])
            tree = await host.snapshot()
            #expect(tree.instance(home.id)?.selectedTab == "todos")
            #expect(tree.instance(todos.id)?.entries?.map(\.transition) == [.push, .modal])
            // Coordinator's pop on the shared path (Node): the pushed project shows only its root, so it leaves.
            let project = try await host.navigate(from: projects.id, [.route("project", ["id": "p1"])]).instance
            _ = try await host.navigate(from: projects.id, [.popPath])
            tree = await host.snapshot()
            #expect(tree.instance(project) == nil && tree.instance(projects.id)?.entries?.isEmpty == true)
            // SUICoordinator's pushes-only pop (Python): settings goes, the sign-out sheet above it stays.
            _ = try await host.navigate(from: profile.id, [.route("settings"), .route("signOut"), .popPushed])
            #expect(await host.snapshot().instance(profile.id)?.entries?.map(\.route) == ["signOut"])
        }
    }

    @Test(
        "the queries of the other libraries through the real host: canDismiss, hasParent, presentedCount, newest",
        arguments: Tier.selected)
    func queries(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            let tree = await host.snapshot()
            let home = try #require(tree.find("authenticated", "home"))
            let todos = try #require(tree.find("todos", "todos"))
            let first = try await host.navigate(from: todos.id, [.route("share", ["id": "7"])]).instance
            _ = try await host.navigate(from: todos.id, [.route("createTodo")])
            let second = try await host.navigate(from: todos.id, [.route("share", ["id": "42"])]).instance
            #expect(try await host.query(.init(query: .canDismiss, instance: first)) == true)
            #expect(try await host.query(.init(query: .canDismiss, instance: home.id)) == false)
            #expect(try await host.query(.init(query: .hasParent, instance: home.id)) == true)
            #expect(try await host.query(.init(query: .hasParent)) == false)
            #expect(try await host.query(.init(query: .presentedCount, instance: todos.id)) == 3)
            #expect(
                try await host.query(.init(query: .newest, plugin: "todos", type: "share")) == .int(second.rawValue))
        }
    }

    @Test(
        "Python and Node tab bars start with some of their tabs, take the others with setTabs, and hear appeared",
        arguments: ["python", "node"])
    func sdkTabs(_ language: String) async throws {
        let fixture = "\(packageRoot)/Tests/Fixtures/plugins/dynamic_tabs"
        let plugin = PluginManifest(
            name: "bar",
            command: language == "python"
                ? [TestPlugins.python, fixture + ".py"] : [TestPlugins.node, fixture + ".js"])
        let logs = LogCapture()
        try await withHost([plugin], root: CoordinatorReference(plugin: "bar", type: "bar"), logs: logs) { host in
            var bar = try #require(await host.snapshot().instances.first)
            #expect(bar.tabs?.map(\.route) == ["b"] && bar.dynamicTabs == true)
            _ = try await host.navigate([.setTabs(["a", "b", "c"]), .selectTab("c")])
            bar = try #require(await host.snapshot().instances.first)
            #expect(bar.tabs?.map(\.route) == ["a", "b", "c"] && bar.selectedTab == "c" && bar.dynamicTabs == nil)
            let b = try #require(bar.tabs?.first { $0.route == "b" }?.entry)
            _ = try await host.navigate([.selectTab("b")])
            try await logs.waitFor("[bar] bar: entry \(b.rawValue) appeared")
        }
    }
}
