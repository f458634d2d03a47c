import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// The composed tree through the real host and the real demo plugins: Swift (main, authenticated, todos), Python
/// (unauthenticated, profile) and Node (projects), each its own process.
@Suite("Navigation across plugin processes", .heavy, .timeLimit(.minutes(1)))
struct NavigationIntegrationTests {
    static func logIn(_ host: HostHandle, as user: String = "alice") async throws {
        _ = try await host.navigate([.setRoot("authenticated", ["user": .string(user)])])
    }

    @Test(
        "the six demo plugins compose and the tree is created: main showing the unauthenticated flow",
        arguments: Tier.selected)
    func initialTree(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            #expect(await host.status().allSatisfy { $0.state == .ready })
            #expect(await host.compositionIssues().isEmpty)
            let tree = await host.snapshot()
            #expect(tree.revision == 1)
            #expect(tree.instances.first?.root?.route == "unauthenticated")
            #expect(
                tree.find("unauthenticated", "unauthenticated")?.root?.content.nameAndProps
                    == ScreenDescriptor(name: "Login"))
        }
    }

    @Test(
        "the Stinsen README chain focusFirst(todos) → child → popToRoot → route(todo, 42) applies as one revision across plugins",
        arguments: Tier.selected)
    func stinsenChain(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            try await Self.logIn(host)
            var tree = await host.snapshot()
            let home = try #require(tree.find("authenticated", "home"))
            let todos = try #require(tree.find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "7"]), .route("createTodo")])
            _ = try await host.navigate(from: home.id, [.selectTab("projects")])
            let before = await host.snapshot().revision
            let result = try await host.navigate(
                from: home.id, [.focusFirst("todos"), .child, .popToRoot, .route("todo", ["id": "42"])])
            tree = await host.snapshot()
            #expect(tree.revision == before + 1)
            #expect(result.instance == todos.id)
            #expect(tree.instance(home.id)?.selectedTab == "todos")
            #expect(tree.instance(todos.id)?.entries?.map(\.params) == [["id": "42"]])
            #expect(
                tree.instance(todos.id)?.entries?.first?.content.nameAndProps
                    == ScreenDescriptor(name: "Todo", props: ["id": "42", "title": "Answer everything"]))
        }
    }

    @Test("the Stinsen README deep link focuses the todos tab and routes to the todo", arguments: Tier.selected)
    func stinsenDeepLink(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            try await Self.logIn(host)
            let before = await host.snapshot().revision
            let result = try await host.open("switchyard://todos/todo/42")
            let tree = await host.snapshot()
            #expect(result.revision == before + 1)
            #expect(tree.find("todos", "todos")?.entries?.map(\.route) == ["todo"])
            #expect(result.instance == tree.find("todos", "todos")?.id)
        }
    }

    @Test(
        "the Coordinator README validity check: valid links pass, invalid ones name the failing segment and change nothing",
        arguments: Tier.selected,
        [
            ("switchyard://todos/new", nil as Int?),
            ("switchyard://profile/settings", nil),
            ("switchyard://projects/p7/members", nil),
            ("switchyard://profile/settings/extra", 2),
            ("switchyard://nowhere", 0),
            ("switchyard://todos/todo", 1),
        ])
    func validity(_ tier: Tier, _ link: (url: String, failingIndex: Int?)) async throws {
        let (url, failingIndex) = link
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            try await Self.logIn(host)
            let validation = await host.validate(url)
            #expect(validation.valid == (failingIndex == nil), "\(url): \(String(describing: validation.error))")
            if let failingIndex {
                #expect(validation.error?.code == .deepLinkInvalid)
                #expect(validation.error?.data?["index"] == .int(Int64(failingIndex)))
                let revision = await host.snapshot().revision
                await #expect(throws: ResponseError.self) { try await host.open(url) }
                #expect(await host.snapshot().revision == revision)
            }
        }
    }

    @Test(
        "dismissCoordinator of a subtree spanning three plugins destroys every instance, and each plugin acknowledges its own",
        arguments: Tier.selected)
    func dismissAcrossPlugins(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            try await Self.logIn(host)
            let events = EventLog(host)
            let todos = try #require(await host.snapshot().find("todos", "todos"))
            // todos (Swift) → share (Swift) → project (Node) → profile (Python)
            let landed = try await host.navigate(
                from: todos.id, [.route("share", ["id": "7"]), .route("pickProject", ["id": "p1"]), .route("owner")])
            var tree = await host.snapshot()
            let share = try #require(tree.find("todos", "share"))
            let project = try #require(tree.find("projects", "project"))
            let owner = try #require(
                tree.instances.first { $0.plugin == "profile" && $0.parent?.instance == project.id })
            #expect(landed.instance == owner.id)
            let result = try await host.navigate(from: share.id, [.dismissCoordinator])
            #expect(result.instance == todos.id)
            tree = await host.snapshot()
            #expect(
                tree.instance(share.id) == nil && tree.instance(project.id) == nil && tree.instance(owner.id) == nil)
            #expect(tree.instance(todos.id)?.entries?.isEmpty == true)
            let expected: Set<String> = [
                "todos#\(share.id.rawValue)", "projects#\(project.id.rawValue)", "profile#\(owner.id.rawValue)",
            ]
            try await events.wait(for: "destroy acknowledgements from three plugins") { events in
                let acknowledged = Set(
                    events.compactMap { event -> String? in
                        if case .destroyed(let plugin, let instance, _) = event {
                            "\(plugin)#\(instance.rawValue)"
                        } else {
                            nil
                        }
                    })
                return acknowledged.isSuperset(of: expected)
            }
        }
    }

    @Test("a guard that rejects a route leaves the tree exactly as it was", arguments: Tier.selected)
    func guardRejects(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            let before = await host.snapshot()
            do throws(ResponseError) {
                _ = try await host.navigate([.setRoot("authenticated", ["user": "mallory"])])
                Issue.record("mallory got in")
            } catch {
                #expect(error.code == .rejectedByGuard)
                #expect(error.message.contains("locked"))
            }
            #expect(await host.snapshot() == before)
            try await Self.logIn(host)
            let revision = await host.snapshot().revision
            await #expect(throws: ResponseError.self) { try await host.open("switchyard://todos/todo/13") }
            #expect(await host.snapshot().revision == revision)
        }
    }

    @Test("a plugin trying to change another plugin's instance is refused with notOwner")
    func notOwner() async throws {
        let logs = LogCapture()
        // No heartbeat: the intruder navigates on every ping, and one during a slow start-up (a loaded machine) would
        // name instance #1 before the root exists. Only the test's own ping, after the start, may trigger it.
        var quiet = LimitOverrides()
        quiet.heartbeatIntervalMs = 0
        let intruder = TestPlugins.misbehave(
            "intruder",
            [
                "--navigate-on-ping",
                #"{"instance": 1, "steps": [{"op": "setRoot", "route": "authenticated", "params": {"user": "eve"}}]}"#,
            ], limits: quiet)
        try await withHost(TestPlugins.demo(extra: [intruder]), root: TestPlugins.demoRoot, logs: logs) { host in
            let before = await host.snapshot()
            _ = try await host.ping("intruder")
            try await logs.waitFor("misbehave: navigate answered")
            let answer = try #require(logs.all.first { $0.contains("navigate answered") })
            #expect(answer.contains("-32012"), "\(answer)")
            #expect(await host.snapshot() == before)
        }
    }

    @Test(
        "a deep link crossing four plugins applies as exactly one revision and one tree/changed",
        arguments: Tier.selected)
    func fourPlugins(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            try await Self.logIn(host)
            let events = EventLog(host)
            let before = await host.snapshot().revision
            let result = try await host.open("switchyard://todos/project/p1/members")
            #expect(result.revision == before + 1)
            let tree = await host.snapshot()
            let project = try #require(tree.find("projects", "project"))
            #expect(project.entries?.map(\.route) == ["members"])
            #expect(result.instance == project.id)
            try await events.wait(for: "tree/changed") {
                $0.contains { if case .treeChanged = $0 { true } else { false } }
            }
            #expect(events.treeRevisions == [before + 1])
        }
    }

    @Test(
        "a deep link whose last hop is rejected leaves the revision unchanged, and what it created is destroyed",
        arguments: Tier.selected)
    func lastHopRejected(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            try await Self.logIn(host)
            let events = EventLog(host)
            let before = await host.snapshot()
            do throws(ResponseError) {
                _ = try await host.open("switchyard://todos/project/p2/members")
                Issue.record("the archived project's members were shown")
            } catch {
                #expect(error.code == .rejectedByGuard)
                #expect(error.message.contains("archived"))
            }
            #expect(await host.snapshot() == before)
            try await events.wait(for: "the project instance created on the way to be destroyed") { events in
                events.contains { if case .destroyed("projects", _, "project") = $0 { true } else { false } }
            }
        }
    }

    @Test("a user dismissal follows the tree and reaches the owning plugin", arguments: Tier.selected)
    func userDismissal(_ tier: Tier) async throws {
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot, logs: logs) { host in
            try await Self.logIn(host)
            let profile = try #require(await host.snapshot().find("profile", "profile"))
            _ = try await host.navigate(from: profile.id, [.route("signOut")])
            let entry = try #require(await host.snapshot().instance(profile.id)?.entries?.first?.entry)
            _ = try await host.userDismissed(instance: profile.id, entry: entry)
            #expect(await host.snapshot().instance(profile.id)?.entries?.isEmpty == true)
            try await logs.waitFor("[profile] profile: signOut dismissed by user")
        }
    }

    @Test(
        "plugin logic navigates: Python finishes a registration and asks Main (another plugin) to switch root",
        arguments: Tier.selected)
    func pythonLogicNavigates(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            let unauthenticated = try #require(await host.snapshot().find("unauthenticated", "unauthenticated"))
            _ = try await host.navigate(
                from: unauthenticated.id, [.route("registration"), .route("done", ["user": "zoe"])])
            try await events.wait(for: "main's root to become authenticated") { events in
                events.contains {
                    if case .treeChanged(let change) = $0 {
                        change.snapshot.instances.first?.root?.route == "authenticated"
                    } else {
                        false
                    }
                }
            }
            #expect(await host.snapshot().find("authenticated", "home") != nil)
        }
    }

    /// A 1 ms session: Main navigates while the login chain that ran its factory is still creating the tabs in
    /// three other plugins. The host holds Main's request until that chain has committed, so it acts on the signed-in
    /// root instead of finding the old one and doing nothing.
    @Test(
        "plugin logic navigates: the Swift Main coordinator's router ends an expired session", arguments: Tier.selected)
    func swiftRouterNavigates(_ tier: Tier) async throws {
        let logs = LogCapture()
        try await withHost(
            TestPlugins.demo(mainArguments: ["--session-ttl-ms", "1"]), tier: tier, root: TestPlugins.demoRoot,
            logs: logs
        ) { host in
            let events = EventLog(host)
            do {
                try await Self.logIn(host)
                try await events.wait(for: "the session to expire and main to show unauthenticated again") { events in
                    events.contains {
                        if case .treeChanged(let change) = $0 {
                            change.snapshot.instances.first?.root?.route == "unauthenticated" && change.revision > 2
                        } else {
                            false
                        }
                    }
                }
            } catch {
                Issue.record("host log:\n\(logs.all.joined(separator: "\n"))")
                throw error
            }
        }
    }

    @Test(
        "every change publishes exactly one tree/changed, with strictly increasing revisions", arguments: Tier.selected)
    func treeChangedEvents(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            try await Self.logIn(host)
            let todos = try #require(await host.snapshot().find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "1"])])
            _ = try await host.navigate(from: todos.id, [.popLast])
            _ = try? await host.navigate(from: todos.id, [.popLast])  // fails: no change, no event
            let final = await host.snapshot().revision
            try await events.wait(for: "three tree/changed events") {
                $0.count { if case .treeChanged = $0 { true } else { false } } >= 3
            }
            #expect(events.treeRevisions == [final - 2, final - 1, final])
        }
    }
}
