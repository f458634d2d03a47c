import Dispatch
import Glibc
import Logging
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Synchronization
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
    /// A test body (or an embedding app) may hold every thread of Swift's global pool in blocking calls — the
    /// synchronous `ControlClient` does exactly that. The host must not need one of those threads to answer: it runs
    /// on its loop, and a request's task starts and resumes there. Every pool thread is held here while a client on a
    /// thread of its own navigates through a plugin; the pool is let go when it has its answers, or after its timeout.
    @Test(
        "the host answers control requests and plugin round trips while every thread of Swift's global pool is blocked")
    func servesWithoutTheGlobalPool() async throws {
        try await withControlSocket(
            [PluginManifest(name: "b0", product: "BenchPlugin", args: ["--peer", "b0"])],
            root: CoordinatorReference(plugin: "b0", type: "bench")
        ) { _, path in
            // More blockers than the pool has threads (one per core): the extra ones wait their turn and leave at once.
            let blockers = 4 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) + 4
            let release = DispatchSemaphore(value: 0)
            let outcome = Mutex<Result<Int64, TestFailure>?>(nil)
            let client = try SystemThread.spawn {
                defer { for _ in 0..<blockers { release.signal() } }
                do {
                    let driver = try ControlClient(path: path, timeoutMilliseconds: 10_000)
                    let root = try driver.call(TreeGetRequest.self, Empty()).instances[0].id
                    let answer = try driver.call(
                        NavigateRequest.self, .init(instance: root, steps: [.route("item", ["id": .string("1")])]))
                    outcome.withLock { $0 = .success(Int64(answer.revision)) }
                } catch {
                    outcome.withLock { $0 = .failure(TestFailure("\(error)")) }
                }
            }
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<blockers { group.addTask { release.wait() } }
            }
            client.join()
            let result = outcome.withLock { $0 }
            #expect(throws: Never.self, "the host did not answer while the pool was blocked") {
                _ = try #require(result).get()
            }
        }
    }

    /// Every method of `HostHandle` runs on the loop and returns its caller to where it came from. In an optimised
    /// build a caller in another module was once left on the loop's thread after awaiting the handle (the handle's
    /// methods inherited their caller's isolation, and the hop back was lost), so its next blocking call stalled the
    /// host for good: each method is checked here, in the build the release tests use too.
    @Test("a caller awaiting any method of HostHandle is never left on the host's loop thread")
    func callerLeavesTheLoop() async throws {
        try await withHost(
            [PluginManifest(name: "b0", product: "BenchPlugin", args: ["--peer", "b0"])],
            root: CoordinatorReference(plugin: "b0", type: "bench")
        ) { host in
            func check(_ method: String, _ location: SourceLocation = #_sourceLocation) {
                #expect(
                    !host.callerIsOnLoopThread, "after \(method) the caller runs on the loop's thread",
                    sourceLocation: location)
            }
            let root = try #require(await host.snapshot().root)
            check("snapshot")
            _ = try await host.history()
            check("history")
            _ = try await host.navigate(from: root, [.route("item", ["id": .string("1")])])
            check("navigate")
            _ = await host.validate("switchyard://b0/nowhere")
            check("validate")
            _ = try? await host.open("switchyard://b0/nowhere")
            check("open")
            _ = try? await host.open(.init(url: "switchyard://b0/nowhere", defer: true))
            check("open(defer:)")
            _ = try await host.pendingDeepLink()
            check("pendingDeepLink")
            _ = try await host.cancelDeepLink()
            check("cancelDeepLink")
            _ = await host.render(.text)
            check("render")
            _ = try await host.query(.init(query: .topCoordinator))
            check("query")
            _ = try await host.describePlugins()
            check("describePlugins")
            _ = await host.routeRegistry()
            check("routeRegistry")
            _ = await host.compositionIssues()
            check("compositionIssues")
            _ = await host.containment()
            check("containment")
            _ = await host.status()
            check("status")
            _ = await host.hostFacts()
            check("hostFacts")
            _ = try await host.ping("b0")
            check("ping")
            _ = try await host.pingSeries("b0", count: 3)
            check("pingSeries")
        }
    }

    /// Coordinators that open each other as initial content (a's root opens b, whose root opens a) would create
    /// instances without end: the composition finds the cycle before any instance exists, names its path and leaves
    /// the plugin that closes it out; the app starts, and opening a works (its root waits for b as a placeholder).
    @Test("a cycle of initial content is found when the tables compose, named, and nothing loops")
    func initialContentCycle() async throws {
        func table(_ type: String, opens target: String) -> String {
            #"[{"type": "\#(type)", "kind": "stack", "initialRoute": "start", "routes": [{"name": "start", "transition": "root", "target": {"plugin": "\#(target)", "type": "main"}}]}]"#
        }
        let home =
            #"[{"type": "home", "kind": "stack", "initialRoute": "start", "routes": [{"name": "start", "transition": "root"}, {"name": "go", "transition": "modal", "target": {"plugin": "a", "type": "main"}}]}]"#
        let plugins = [
            TestPlugins.misbehave("r", ["--route-table", home, "--play-table"]),
            TestPlugins.misbehave("a", ["--route-table", table("main", opens: "b"), "--play-table"]),
            TestPlugins.misbehave("b", ["--route-table", table("main", opens: "a"), "--play-table"]),
        ]
        try await withHost(plugins, root: CoordinatorReference(plugin: "r", type: "home")) { host in
            let cycles = await host.compositionIssues().filter { $0.category == .cycle }
            #expect(cycles.count == 1, "\(cycles)")
            let cycle = try #require(cycles.first)
            #expect(cycle.plugin == "b" && cycle.type == "main" && cycle.route == "start")
            #expect(cycle.reason.contains("a.main → b.main → a.main"), "\(cycle.reason)")
            #expect(await host.status().first { $0.name == "b" }?.state == .failed)
            _ = try await host.navigate([.route("go")])
            #expect(await host.snapshot().instances.count <= 3, "no instance beyond r, a and b's placeholder")
        }
    }
}
