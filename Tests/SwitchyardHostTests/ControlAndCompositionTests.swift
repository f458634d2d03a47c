import Glibc
import Logging
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

@Suite("Control interface and composition at start-up", .heavy, .timeLimit(.minutes(1)))
struct ControlAndCompositionTests {
    static func socketPath() -> String {
        "/tmp/switchyard-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))/control.sock"
    }

    @Test(
        "a client subscribes, navigates and receives tree/changed; the socket is 0600; garbage and a mid-line disconnect do no harm"
    )
    func controlSocket() async throws {
        let path = Self.socketPath()
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.controlSocket = path
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: options) { host in
            #expect(FileSystem.permissions(path) == 0o600)
            // A client that sends half a line and disconnects.
            let quitter = try UnixSocket(connectingTo: path)
            try quitter.write(Array(#"{"jsonrpc":"2.0","id":1,"meth"#.utf8))
            quitter.close()

            let client = try ControlClient(path: path)
            let subscribed = try client.call("tree/subscribe", [:])
            #expect(subscribed["revision"] == .int(1))
            // Garbage gets a typed error and the connection stays usable.
            try client.sendRaw("this is not json\n")
            guard case .errorResponse(nil, let parseError) = try client.next() else {
                Issue.record("expected a parse error")
                return
            }
            #expect(parseError.code == .parseError)
            if case .failure(let error) = try client.response("no/such/method") {
                #expect(error.code == .methodNotFound)
            } else {
                Issue.record("an unknown method succeeded")
            }
            // Navigate over the socket; the subscription delivers the new tree.
            let login = try client.call(
                "navigate", ["steps": [["op": "setRoot", "route": "authenticated", "params": ["user": "alice"]]]])
            #expect(login["revision"] == .int(2))
            let changed = try client.nextNotification("tree/changed")
            #expect(changed?["revision"] == .int(2))
            #expect(changed?["snapshot"]?["instances"]?.arrayValue?.first?["root"]?["route"] == "authenticated")
            // Deep links, validation, rendering and queries.
            let opened = try client.call("open", ["url": "switchyard://todos/todo/42"])
            #expect(opened["revision"] == .int(3))
            let invalid = try client.call("validate", ["url": "switchyard://nowhere"])
            #expect(invalid["valid"] == false && invalid["error"]?["code"] == .int(-32014))
            let text = try client.call("tree/render", ["format": "text"])["text"]?.stringValue ?? ""
            #expect(text.contains("push todo{\"id\":\"42\"}"))
            let top = try client.call("tree/query", ["query": "topCoordinator"])
            #expect(top["result"] == .int((await host.snapshot().find("todos", "todos")?.id.rawValue) ?? -1))
            let status = try client.call("host/status")
            #expect(status["plugins"]?.arrayValue?.count == 6)
            _ = try await host.ping("main")
        }
        #expect(!FileSystem.exists(path), "the socket is removed at shutdown")
    }

    @Test(
        "a plugin whose table breaks the composition is reported with the plugin, the route and the reason, and the app starts without it"
    )
    func brokenPluginExcluded() async throws {
        let broken = TestPlugins.misbehave(
            "broken",
            [
                "--route-table",
                #"[{"type": "lab", "kind": "stack", "initialRoute": "bench", "routes": [{"name": "bench", "transition": "root"}, {"name": "away", "transition": "modal", "target": {"plugin": "todos", "type": "nonexistent"}}]}]"#,
            ])
        try await withHost(TestPlugins.demo(extra: [broken]), root: TestPlugins.demoRoot) { host in
            let issues = await host.compositionIssues()
            let issue = try #require(issues.first { $0.plugin == "broken" })
            #expect(issue.route == "away" && issue.reason.contains("does not declare"))
            let status = await host.status().first { $0.name == "broken" }
            #expect(status?.state == .failed)
            #expect(status?.error?.code == .compositionError)
            #expect(await host.snapshot().revision == 1, "the app started without it")
            _ = try await host.ping("main")
        }
    }

    @Test("a strict manifest refuses to start when the tables do not compose")
    func strictRefuses() async throws {
        let broken = TestPlugins.misbehave(
            "broken",
            [
                "--route-table",
                #"[{"type": "lab", "kind": "stack", "routes": [{"name": "bench", "transition": "root"}]}]"#,
            ])
        let manifest = Manifest(
            app: "strict", root: TestPlugins.demoRoot, strict: true, plugins: TestPlugins.demo(extra: [broken]),
            directory: packageRoot)
        do {
            let host = try await HostHandle.start(
                manifest: manifest, options: HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500),
                logger: .init(label: "strict"))
            await host.shutdown()
            Issue.record("a strict manifest with a broken table started")
        } catch let error as ResponseError {
            #expect(error.code == .compositionError)
            #expect(error.message.contains("broken") && error.message.contains("initialRoute"))
        }
    }
}
