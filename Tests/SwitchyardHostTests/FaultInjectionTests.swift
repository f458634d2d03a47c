import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// `host/plugins`, `plugin/signal` and `plugin/restart` (spec §15.2) on a real host with the demo's real plugins.
/// (Their refusal on a host without fault injection is in Protocol/transcripts/inspection.jsonl.)
@Suite("Inspection and fault injection", .heavy, .timeLimit(.minutes(2)))
struct FaultInjectionTests {
    /// A plugin's status now, as `host/status` gives it.
    func status(_ client: AsyncControlClient, _ plugin: String) async throws -> HostStatusRequest.Plugin {
        try #require(
            try await client.call(HostStatusRequest.self, Empty()).plugins.first { $0.name == plugin },
            "no plugin \(plugin)")
    }

    @Test(
        "host/plugins gives every plugin's command, declarations as declared and stderr lines; SIGKILL restarts a plugin and its nodes come back; SIGSTOP/SIGCONT; plugin/restart answers once it serves again"
    )
    func faults() async throws {
        try await withControlHost(TestPlugins.demo(), root: TestPlugins.demoRoot, allowFaults: true) { host, client in
            let events = EventLog(host)
            let described = try await client.call(HostPluginsRequest.self, Empty())
            #expect(described.faults)
            #expect(
                described.plugins.map(\.name) == [
                    "main", "unauthenticated", "authenticated", "todos", "projects", "profile",
                ])
            let todos = try #require(
                described.plugins.first { $0.name == "todos" }?.coordinators?.first { $0.type == "todos" })
            #expect(todos.route(named: "todo")?.deepLink == "todo/:id")
            #expect(
                described.plugins.first { $0.name == "unauthenticated" }?.command?.contains {
                    $0.hasSuffix("unauthenticated.py")
                } == true)

            _ = try await client.call(
                NavigateRequest.self, .init(steps: [.setRoot("authenticated", ["user": "alice"])]))
            try await events.waitUntilReady(host, "todos", restarts: 0)
            let before = try await status(client, "todos")
            let killed = try await client.call(PluginSignalRequest.self, .init(plugin: "todos", signal: .kill))
            #expect(killed.pid == before.pid)
            try await events.waitUntilReady(host, "todos", restarts: before.restarts + 1)
            let back = try await status(client, "todos")
            #expect(back.restarts == before.restarts + 1)
            #expect(back.pid != before.pid)
            let tree = try await client.call(TreeGetRequest.self, Empty())
            #expect(tree.instances.filter { $0.plugin == "todos" }.allSatisfy { $0.status == .ok })

            try await events.waitUntilReady(host, "projects", restarts: 0)
            let running = try await status(client, "projects")
            _ = try await client.call(PluginSignalRequest.self, .init(plugin: "projects", signal: .stop))
            _ = try await client.call(PluginSignalRequest.self, .init(plugin: "projects", signal: .cont))
            #expect(try await client.call("$/ping") == .object([:]))
            // Stopped and continued, not condemned: the same process, not restarted.
            let resumed = try await status(client, "projects")
            #expect(
                resumed.pid == running.pid && resumed.restarts == running.restarts && resumed.state == "ready",
                "\(running) → \(resumed)")

            let restarted = try await client.call(PluginRestartRequest.self, .init(plugin: "profile"))
            #expect(restarted.state == "ready")
            #expect(restarted.restarts == 1)

            if case .failure(let error) = try await client.response(
                PluginSignalRequest.method, ["plugin": "nobody", "signal": "SIGKILL"])
            {
                #expect(error.code == .invalidParams)
            } else {
                Issue.record("a signal to an unknown plugin succeeded")
            }
        }
    }

    @Test("without --allow-faults the fault methods are refused (notAllowed) and the plugin keeps running")
    func refused() async throws {
        try await withControlHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host, client in
            #expect(try await client.call(HostPluginsRequest.self, Empty()).faults == false)
            try await EventLog(host).waitUntilReady(host, "todos", restarts: 0)
            let before = try await status(client, "todos")
            let attempts: [(String, JSONValue)] = [
                (PluginSignalRequest.method, ["plugin": "todos", "signal": "SIGKILL"]),
                (PluginRestartRequest.method, ["plugin": "todos"]),
            ]
            for (method, params) in attempts {
                guard case .failure(let error) = try await client.response(method, params) else {
                    Issue.record("\(method) succeeded without --allow-faults")
                    continue
                }
                #expect(error.code == .notAllowed)
                #expect(error.data?["flag"] == "--allow-faults")
            }
            let after = try await status(client, "todos")
            #expect(after.state == "ready" && after.pid == before.pid && after.restarts == before.restarts)
        }
    }
}
