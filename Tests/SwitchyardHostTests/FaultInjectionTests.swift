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
    func withDemoHost(allowFaults: Bool, _ body: @Sendable (AsyncControlClient) async throws -> Void) async throws {
        let path = try TestSweep.temporaryDirectory() + "/control.sock"
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.controlSocket = path
        options.allowFaults = allowFaults
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: options) { _ in
            try await body(try AsyncControlClient(path: path, timeoutMilliseconds: 20_000))
        }
    }

    /// Waits (bounded) until `plugin`'s status satisfies `condition`.
    func status(_ client: AsyncControlClient, _ plugin: String, _ what: String, until condition: @escaping @Sendable (HostStatusRequest.Plugin) -> Bool) async throws -> HostStatusRequest.Plugin {
        try await withDeadline(seconds: defaultTimeout, "\(plugin): \(what)") {
            while true {
                let status = try await client.call(HostStatusRequest.self, Empty())
                if let found = status.plugins.first(where: { $0.name == plugin }), condition(found) { return found }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    @Test("host/plugins gives every plugin's command, declarations as declared and stderr lines; SIGKILL restarts a plugin and its nodes come back; SIGSTOP/SIGCONT; plugin/restart answers once it serves again")
    func faults() async throws {
        try await withDemoHost(allowFaults: true) { client in
            let described = try await client.call(HostPluginsRequest.self, Empty())
            #expect(described.faults)
            #expect(described.plugins.map(\.name) == ["main", "unauthenticated", "authenticated", "todos", "projects", "profile"])
            let todos = try #require(described.plugins.first { $0.name == "todos" }?.coordinators?.first { $0.type == "todos" })
            #expect(todos.route(named: "todo")?.deepLink == "todo/:id")
            #expect(described.plugins.first { $0.name == "unauthenticated" }?.command?.contains { $0.hasSuffix("unauthenticated.py") } == true)

            _ = try await client.call(NavigateRequest.self, .init(steps: [.setRoot("authenticated", ["user": "alice"])]))
            let before = try await status(client, "todos", "ready") { $0.state == "ready" }
            let killed = try await client.call(PluginSignalRequest.self, .init(plugin: "todos", signal: .kill))
            #expect(killed.pid == before.pid)
            let back = try await status(client, "todos", "restarted after SIGKILL") { $0.state == "ready" && $0.restarts == before.restarts + 1 }
            #expect(back.pid != before.pid)
            let tree = try await client.call(TreeGetRequest.self, Empty())
            #expect(tree.instances.filter { $0.plugin == "todos" }.allSatisfy { $0.status == .ok })

            _ = try await client.call(PluginSignalRequest.self, .init(plugin: "projects", signal: .stop))
            _ = try await client.call(PluginSignalRequest.self, .init(plugin: "projects", signal: .cont))
            #expect(try await client.call("$/ping") == .object([:]))

            let restarted = try await client.call(PluginRestartRequest.self, .init(plugin: "profile"))
            #expect(restarted.state == "ready")
            #expect(restarted.restarts == 1)

            if case .failure(let error) = try await client.response(PluginSignalRequest.method, ["plugin": "nobody", "signal": "SIGKILL"]) {
                #expect(error.code == .invalidParams)
            } else {
                Issue.record("a signal to an unknown plugin succeeded")
            }
        }
    }

    @Test("without --allow-faults the fault methods are refused (notAllowed) and the plugin keeps running")
    func refused() async throws {
        try await withDemoHost(allowFaults: false) { client in
            #expect(try await client.call(HostPluginsRequest.self, Empty()).faults == false)
            let before = try await status(client, "todos", "ready") { $0.state == "ready" }
            let attempts: [(String, JSONValue)] = [
                (PluginSignalRequest.method, ["plugin": "todos", "signal": "SIGKILL"]), (PluginRestartRequest.method, ["plugin": "todos"]),
            ]
            for (method, params) in attempts {
                guard case .failure(let error) = try await client.response(method, params) else {
                    Issue.record("\(method) succeeded without --allow-faults")
                    continue
                }
                #expect(error.code == .notAllowed)
                #expect(error.data?["flag"] == "--allow-faults")
            }
            let after = try await status(client, "todos", "ready") { $0.state == "ready" }
            #expect(after.pid == before.pid && after.restarts == before.restarts)
        }
    }
}
