import Foundation
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// `--state FILE`: the tree survives the host, atomically.
@Suite("State file", .heavy, .timeLimit(.minutes(2)))
struct StateFileTests {
    static func temporaryPath() throws -> String {
        try TestSweep.temporaryDirectory() + "/tree.json"
    }

    static func options(_ path: String) -> HostOptions {
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.stateFile = path
        return options
    }

    static func readTree(_ path: String) throws -> TreeSnapshot {
        let value = try JSONParser.parse(try FileSystem.readFile(path))
        #expect(value["format"] == "switchyard-state")
        return try JSONValueDecoder().decode(TreeSnapshot.self, from: try #require(value["tree"]))
    }

    @Test(
        "the tree is written after changes and restored at the next start, every instance re-created in its plugin",
        arguments: Tier.selected)
    func roundTrip(_ tier: Tier) async throws {
        let path = try Self.temporaryPath()
        let saved = try await withHost(
            TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot, options: Self.options(path)
        ) {
            host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            _ = try await host.open("switchyard://todos/todo/42")
            let todos = try #require(await host.snapshot().find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("share", ["id": "42"])])
            _ = try await host.open("switchyard://profile/settings")
            return await host.snapshot()
        }
        #expect(try Self.readTree(path) == saved)

        let logs = LogCapture()
        try await withHost(
            TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot, options: Self.options(path), logs: logs
        ) {
            host in
            let restored = await host.snapshot()
            #expect(restored == saved)
            #expect(
                logs.contains(
                    "tree restored from the state file: \(saved.instances.count) instances, revision \(saved.revision)")
            )
            // The plugins know their restored instances: the share flow (Swift, with state) goes on.
            let share = try #require(restored.find("todos", "share"))
            #expect(share.state == ["todo": "42"])
            let landed = try await host.navigate(from: share.id, [.route("pickProject", ["id": "p2"])])
            #expect(await host.snapshot().instance(landed.instance)?.plugin == "projects")
            // Python and Node plugins too.
            _ = try await host.navigate(from: try #require(restored.find("profile", "profile")).id, [.popLast])
            // Ids continue after the saved ones.
            #expect(landed.instance.rawValue > (saved.instances.map(\.id.rawValue).max() ?? 0))
        }
    }

    @Test(
        "a corrupt or torn state file is reported and set aside; the app starts fresh",
        arguments: [
            "this is not json", #"{"format":"switchyard-state","version":1,"nextInstanceID":3,"nextEntryID":"#,
            #"{"format":"something-else","version":1}"#,
            #"{"format":"switchyard-state","version":1,"nextInstanceID":9,"nextEntryID":9,"tree":{"revision":4,"root":1,"instances":[{"id":1,"plugin":"main","type":"main","kind":"stack","status":"ok","root":{"entry":1,"route":"x","transition":"root","content":{"coordinator":7}}}]}}"#,
        ])
    func corrupt(_ content: String) async throws {
        let path = try Self.temporaryPath()
        try SpawnLock.withLock { try content.write(toFile: path, atomically: false, encoding: .utf8) }
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: Self.options(path), logs: logs) {
            host in
            let tree = await host.snapshot()
            #expect(tree.revision == 1)
            #expect(tree.find("unauthenticated", "unauthenticated") != nil)
            #expect(logs.contains("the state file \(path) cannot be used"))
            let directory = FileSystem.parentDirectory(of: path)
            let aside = FileSystem.listDirectory(directory).filter { $0.hasPrefix("tree.json.corrupt-") }
            #expect(aside.count == 1)
            let kept = String(decoding: try FileSystem.readFile("\(directory)/\(aside[0])"), as: UTF8.self)
            #expect(kept == content)
        }
        // The fresh tree was written in its place.
        #expect(try Self.readTree(path).revision == 1)
    }

    @Test("a state file of another app's shape (its root is not the manifest's) is set aside, not forced on this app")
    func incompatible() async throws {
        let path = try Self.temporaryPath()
        _ = try await withHost(
            [TestPlugins.misbehave("lab", [])], root: CoordinatorReference(plugin: "lab", type: "lab"),
            options: Self.options(path)
        ) { host in
            await host.snapshot()
        }
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: Self.options(path), logs: logs) {
            host in
            #expect(await host.snapshot().find("main", "main") != nil)
            #expect(logs.contains("its root is lab.lab"))
        }
    }

    /// The demo app with its signed-in tabs coordinator played by misbehave, declaring only `tabs` (in that order),
    /// and its profile plugin, if `profileRoutes` is given, too (a stack "profile" with those push/modal routes).
    static func app(tabs: [String], profileRoutes: [(String, String)]? = nil) -> [PluginManifest] {
        let targets = [
            "todos": ("todos", "navigation"), "projects": ("projects", "projects"), "profile": ("profile", "profile"),
        ]
        let home = tabs.map { tab in
            #"{"name": "\#(tab)", "transition": "tab", "deepLink": "\#(tab)", "target": {"plugin": "\#(targets[tab]?.0 ?? tab)", "type": "\#(targets[tab]?.1 ?? tab)"}}"#
        }
        let authenticated = PluginManifest(
            name: "authenticated", product: "misbehave",
            args: [
                "--name", "authenticated", "--play-table", "--route-table",
                #"[{"type": "home", "kind": "tabs", "routes": [\#(home.joined(separator: ", "))]}]"#,
            ])
        var plugins = TestPlugins.demo().map { $0.name == "authenticated" ? authenticated : $0 }
        if let profileRoutes {
            let routes =
                [#"{"name": "bench", "transition": "root"}"#]
                + profileRoutes.map { #"{"name": "\#($0.0)", "transition": "\#($0.1)", "deepLink": "\#($0.0)"}"# }
            plugins = plugins.map { plugin in
                guard plugin.name == "profile" else { return plugin }
                return PluginManifest(
                    name: "profile", product: "misbehave",
                    args: [
                        "--name", "profile", "--play-table", "--route-table",
                        #"[{"type": "profile", "kind": "stack", "initialRoute": "bench", "routes": [\#(routes.joined(separator: ", "))]}]"#,
                    ])
            }
        }
        return plugins
    }

    @Test(
        "a state file saved before the app gained a tab restores with the new tab, created by its plugin, and the old content kept"
    )
    func gainedTab() async throws {
        let path = try Self.temporaryPath()
        let saved = try await withHost(
            Self.app(tabs: ["todos", "profile"]), root: TestPlugins.demoRoot, options: Self.options(path)
        ) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            _ = try await host.open("switchyard://todos/todo/42")
            _ = try await host.open("switchyard://profile/settings")
            return await host.snapshot()
        }
        let savedHome = try #require(saved.find("authenticated", "home"))
        #expect(savedHome.tabs?.map(\.route) == ["todos", "profile"] && savedHome.selectedTab == "profile")

        let logs = LogCapture()
        try await withHost(
            Self.app(tabs: ["todos", "projects", "profile"]), root: TestPlugins.demoRoot, options: Self.options(path),
            logs: logs
        ) { host in
            let restored = await host.snapshot()
            let home = try #require(restored.instance(savedHome.id))
            #expect(home.tabs?.map(\.route) == ["todos", "projects", "profile"], "the new tab, in declaration order")
            #expect(home.selectedTab == "profile", "the selected tab is still the one the user was on")
            // What the file held is kept as it was: the same instances, entries and ids.
            for instance in saved.instances where instance.id != savedHome.id {
                #expect(restored.instance(instance.id) == instance, "\(instance.plugin).\(instance.type)\(instance.id)")
            }
            #expect(home.tabs?.filter { $0.route != "projects" } == savedHome.tabs)
            // The new tab's content is what the plugins give a new tab: a projects coordinator, created and served.
            guard case .coordinator(let id)? = home.tabs?.first(where: { $0.route == "projects" })?.content else {
                Issue.record("the projects tab holds no coordinator: \(home)")
                return
            }
            let projects = try #require(restored.instance(id))
            #expect(
                projects.plugin == "projects" && projects.type == "projects" && projects.status == .ok
                    && projects.root != nil)
            #expect(id.rawValue > (saved.instances.map(\.id.rawValue).max() ?? 0), "ids continue after the saved ones")
            #expect(restored.revision > saved.revision)
            _ = try await host.open("switchyard://projects/p1")
            _ = try await host.navigate(from: try #require(restored.find("todos", "todos")).id, [.popLast])
            #expect(!logs.contains("state file: dropped"), "nothing was dropped")
        }
    }

    @Test(
        "routes and tabs a state file holds that the route tables no longer declare are dropped with a log line naming them; the rest is restored"
    )
    func droppedParts() async throws {
        let path = try Self.temporaryPath()
        let before = Self.app(
            tabs: ["todos", "projects", "profile"],
            profileRoutes: [("detail", "push"), ("sheet", "modal"), ("note", "push")])
        let saved = try await withHost(before, root: TestPlugins.demoRoot, options: Self.options(path)) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            _ = try await host.open("switchyard://projects/p1")
            let profile = try #require(await host.snapshot().find("profile", "profile"))
            _ = try await host.navigate(from: profile.id, [.route("detail"), .route("sheet"), .route("note")])
            return await host.snapshot()
        }
        let savedProfile = try #require(saved.find("profile", "profile"))
        let savedProjects = try #require(saved.find("projects", "projects"))
        let savedHome = try #require(saved.find("authenticated", "home"))
        let projectsTab = try #require(savedHome.tabs?.first { $0.route == "projects" })
        let sheet = try #require(savedProfile.entries?.first { $0.route == "sheet" })
        let note = try #require(savedProfile.entries?.first { $0.route == "note" })

        // The next version: no projects tab, and the profile stack has no sheet any more.
        let after = Self.app(tabs: ["todos", "profile"], profileRoutes: [("detail", "push"), ("note", "push")])
        let logs = LogCapture()
        try await withHost(after, root: TestPlugins.demoRoot, options: Self.options(path), logs: logs) { host in
            let restored = await host.snapshot()
            #expect(restored.instance(savedProjects.id) == nil)
            #expect(restored.instance(savedHome.id)?.tabs?.map(\.route) == ["todos", "profile"])
            // A stack is a path: the entry above the dropped one goes too.
            #expect(restored.instance(savedProfile.id)?.entries?.map(\.route) == ["detail"])
            #expect(restored.find("todos", "todos") == saved.find("todos", "todos"))
            for line in [
                "state file: dropped instance projects.projects\(savedProjects.id): held by a dropped entry",
                "state file: dropped entry 'projects' [\(projectsTab.entry)] of authenticated.home\(savedHome.id): authenticated.home no longer declares the tab 'projects'",
                "state file: dropped entry 'note' [\(note.entry)] of profile.profile\(savedProfile.id): above a dropped entry",
                "state file: dropped entry 'sheet' [\(sheet.entry)] of profile.profile\(savedProfile.id): profile.profile no longer declares the route 'sheet'",
            ] {
                #expect(logs.contains(line), "missing log line: \(line)")
            }
            // The kept parts are served: the profile stack (restored in its plugin) and the todos tab.
            _ = try await host.navigate(from: savedProfile.id, [.route("note")])
            _ = try await host.open("switchyard://todos/todo/42")
        }
    }

    @Test(
        "a host SIGKILLed during a burst of changes leaves the old tree or a new one, never a torn file, and it restores"
    )
    func killedMidWrite() async throws {
        let path = try Self.temporaryPath()
        // A burst: hundreds of chains, each a new revision, each scheduling a write.
        var script = "nav @root setRoot authenticated {\"user\":\"alice\"}\n"
        for round in 0..<400 {
            script +=
                round % 2 == 0
                ? "nav todos.todos route todo {\"id\":\"\(round % 4 == 0 ? "1" : "7")\"}\n"
                : "nav todos.todos popLast\n"
        }
        // A first run to the end: the file holds a tree before any kill.
        let complete = try CLIProcess(["run", "--script", "-", "--state", path, "--no-socket"])
        complete.send(script)
        complete.closeStdin()
        #expect(try await complete.waitForExit() == 0)
        var revisions = [try Self.readTree(path).revision]
        for attempt in 0..<4 {
            let cli = try CLIProcess(["run", "--script", "-", "--state", path, "--no-socket"])
            cli.send(script)
            cli.closeStdin()
            try await cli.waitForStderr("switchyard: ready")
            // The kill lands somewhere in the burst: a different moment each time (the randomness of the experiment,
            // not a wait for anything).
            try await Task.sleep(for: .milliseconds(20 + 40 * attempt))
            cli.signal(SIGKILL)
            _ = try await cli.waitForExit()
            let tree = try Self.readTree(path)
            _ = try NavigationTree(snapshot: tree)
            revisions.append(tree.revision)
        }
        #expect(revisions.allSatisfy { $0 >= 1 })
        #expect(revisions.first == 402)
        // The next host (same app) restores the last tree written, and cleans up what a kill left half-written.
        let last = try Self.readTree(path)
        let next = try CLIProcess(["run", "--script", "-", "--state", path, "--no-socket", "--json"])
        next.closeStdin()
        #expect(try await next.waitForExit() == 0)
        let restored = try JSONValueDecoder().decode(
            TreeSnapshot.self, from: JSONParser.parse(try #require(next.stdout.last)))
        #expect(restored == last)
        let leftovers = FileSystem.listDirectory(FileSystem.parentDirectory(of: path)).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
