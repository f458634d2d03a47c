import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import SwitchyardSpec
import Testing

/// An app degrades instead of refusing: a tab whose plugin does not serve is a placeholder, unavailable with the
/// reason, while the other tabs work, and it comes alive when its plugin does.
@Suite("Degraded start: placeholders for plugins that do not serve", .heavy, .timeLimit(.minutes(2)))
struct DegradeTests {
    /// The demo app whose profile plugin (a tab of the signed-in tabs coordinator) is misbehave playing the profile
    /// type, with `arguments`.
    static func app(_ arguments: [String], startTimeoutMs: Int? = nil) -> [PluginManifest] {
        TestPlugins.demo().map { plugin in
            guard plugin.name == "profile" else { return plugin }
            return PluginManifest(
                name: "profile", product: "misbehave", args: ["--name", "profile", "--type", "profile"] + arguments,
                startTimeoutMs: startTimeoutMs)
        }
    }

    /// Navigation into a placeholder fails with `pluginUnavailable`, naming the plugin.
    static func expectUnavailable(_ what: String, _ body: () async throws -> NavigateRequest.Result) async {
        do {
            let result = try await body()
            Issue.record("\(what) succeeded: \(result)")
        } catch let error as ResponseError {
            #expect(error.code == .pluginUnavailable && error.message.contains("plugin 'profile'"), "\(what): \(error)")
        } catch {
            Issue.record("\(what): not a typed error: \(error)")
        }
    }

    @Test(
        "a tab whose plugin failed at start is a placeholder with the reason while signing in and the other tabs work; it comes alive when the plugin starts"
    )
    func missingAtStart() async throws {
        // Fails its first start (exits during the handshake), as a plugin with a missing dependency does.
        try await withHost(Self.app(["--exit-in-handshake", "3", "--faulty-runs", "0"]), root: TestPlugins.demoRoot) {
            host in
            #expect(await host.status().first { $0.name == "profile" }?.state == .failed)
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            let tree = await host.snapshot()
            let home = try #require(tree.find("authenticated", "home"))
            #expect(home.tabs?.map(\.route) == ["todos", "projects", "profile"])
            let placeholder = try #require(tree.find("profile", "profile"))
            #expect(home.tabs?.last?.content == .coordinator(placeholder.id))
            #expect(placeholder.pending == true && placeholder.kind == nil && placeholder.status == .unavailable)
            let reason = try #require(placeholder.unavailableReason)
            #expect(reason.contains("plugin 'profile'") && reason.contains("exited with code 3"), "\(reason)")
            // As clients get it (the snapshot's own writer), it is what the schema says.
            var writer = JSONWriter()
            tree.write(to: &writer)
            let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")
            #expect(try validator.validate(try JSONParser.parse(writer.bytes), against: "tree.json") == [])

            // The other tabs serve.
            try await FaultTests.othersServe(host)
            // Selecting the tab shows the placeholder; going into it fails, typed, naming the plugin.
            _ = try await host.open("switchyard://profile")
            #expect(await host.snapshot().find("authenticated", "home")?.selectedTab == "profile")
            await Self.expectUnavailable("a route on the placeholder") {
                try await host.navigate(from: placeholder.id, [.route("sample", ["id": "1"])])
            }
            await Self.expectUnavailable("a deep link through it") {
                try await host.open("switchyard://profile/sample/1")
            }

            // Fixed, and started again: it joins the running app and the placeholder is created in it, same id.
            let status = try await host.startPlugin("profile")
            #expect(status.state == "ready" && status.restarts == 1)
            let alive = try #require(await host.snapshot().instance(placeholder.id))
            #expect(
                alive.pending == nil && alive.kind == .stack && alive.status == .ok && alive.unavailableReason == nil)
            #expect(alive.root?.route == "bench" && alive.parent == placeholder.parent)
            #expect(
                !(await host.compositionIssues()).contains { $0.reason.contains("'profile', which is not running") })
            _ = try await host.navigate(from: placeholder.id, [.route("sample", ["id": "1"])])
            _ = try await host.open("switchyard://profile/sample/2")
            #expect(await host.snapshot().instance(placeholder.id)?.entries?.map(\.route) == ["sample", "sample"])
            try await FaultTests.othersServe(host)
        }
    }

    @Test(
        "starting a plugin that fails again answers with why; the placeholder stays; an unknown plugin is a typed error"
    )
    func startFailsAgain() async throws {
        try await withHost(Self.app(["--exit-in-handshake", "3"]), root: TestPlugins.demoRoot) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            do throws(ResponseError) {
                let status = try await host.startPlugin("profile")
                Issue.record("it started: \(status)")
            } catch {
                #expect(error.code == .pluginUnavailable && error.message.contains("exited with code 3"), "\(error)")
            }
            let status = try #require(await host.status().first { $0.name == "profile" })
            #expect(status.state == .failed && status.restarts == 1)
            #expect(await host.snapshot().find("profile", "profile")?.pending == true)
            do throws(ResponseError) {
                _ = try await host.startPlugin("nope")
                Issue.record("an unknown plugin started")
            } catch {
                #expect(error.code == .invalidParams && error.message.contains("'nope'"), "\(error)")
            }
        }
    }

    @Test(
        "a tab whose plugin is restarting when its tabs coordinator opens is a placeholder; it is created when the plugin is back"
    )
    func restartingAtSignIn() async throws {
        let gate = try TestSweep.temporaryDirectory() + "/go"
        // Its first restart holds its handshake until the test lets it go.
        let plugins = Self.app(["--faulty-runs", "1", "--hold-handshake-until", gate], startTimeoutMs: 60_000)
        try await withHost(plugins, root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            await host.signal(plugin: "profile", SIGKILL)
            try await events.waitForPlugins(host, "profile starting again, held in its handshake") { latest in
                latest["profile"]?.state == .starting && (latest["profile"]?.restarts ?? 0) == 1
            }
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            let placeholder = try #require(await host.snapshot().find("profile", "profile"))
            #expect(placeholder.pending == true && placeholder.status == .unavailable && placeholder.kind == nil)
            try await FaultTests.othersServe(host)

            try FileSystem.writeFileAtomically(gate, [])
            try await events.wait(for: "the profile placeholder created") { events in
                events.contains { event in
                    guard case .treeChanged(let change) = event else { return false }
                    return change.snapshot.instance(placeholder.id).map { $0.pending == nil && $0.status == .ok }
                        ?? false
                }
            }
            let alive = try #require(await host.snapshot().instance(placeholder.id))
            #expect(alive.kind == .stack && alive.root?.route == "bench")
            _ = try await host.navigate(from: placeholder.id, [.route("sample", ["id": "1"])])
        }
    }

    @Test("a placeholder kept in the state file is created at the next start, when its plugin serves")
    func placeholderAcrossRuns() async throws {
        let path = try TestSweep.temporaryDirectory() + "/tree.json"
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.stateFile = path
        let saved = try await withHost(
            Self.app(["--exit-in-handshake", "3"]), root: TestPlugins.demoRoot, options: options
        ) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            return await host.snapshot()
        }
        let placeholder = try #require(saved.find("profile", "profile"))
        #expect(placeholder.pending == true)
        try await withHost(Self.app([]), root: TestPlugins.demoRoot, options: options) { host in
            let restored = await host.snapshot()
            let alive = try #require(restored.instance(placeholder.id))
            #expect(alive.pending == nil && alive.status == .ok && alive.root?.route == "bench")
            for instance in saved.instances where instance.id != placeholder.id {
                #expect(restored.instance(instance.id) == instance)
            }
            _ = try await host.navigate(from: placeholder.id, [.route("sample", ["id": "1"])])
        }
    }
}
