import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// One way a plugin misbehaves, and what the host must do about it.
struct Fault: Sendable, CustomStringConvertible {
    enum Trigger: Sendable {
        /// Take the `fault` route on the victim (misbehave's --trigger-route).
        case route
        /// Send the victim's process group a signal from outside.
        case signal(Int32)
    }

    let description: String
    let arguments: [String]
    var limits = LimitOverrides()
    var trigger = Trigger.route
    /// Restarted (or quarantined, then restarted) per the default permanent policy; else it keeps serving.
    var restarts = 1
    /// The error the triggering request must fail with, if it must fail.
    var triggerError: ErrorCode?
    /// A log line that names the fault.
    var logged: String

    static let all: [Fault] = [
        Fault(
            description: "crash (SIGABRT)", arguments: ["--crash-after", "1"], triggerError: .pluginUnavailable,
            logged: "crashed"),
        Fault(
            description: "hang (a request never answered)", arguments: ["--hang-after", "1"],
            limits: with { $0.requestTimeoutMs = 1_000 }, triggerError: .timeout,
            logged: "hung: no answer to 'coordinator/route'"),
        Fault(
            description: "garbage lines (quarantined)", arguments: ["--garbage-after", "1"],
            limits: with {
                $0.maxProtocolErrors = 3; $0.heartbeatIntervalMs = 50
            }, logged: "quarantined: 4 protocol errors"),
        Fault(
            description: "an oversize line (reported, not fatal)",
            arguments: ["--oversize-after", "1", "--oversize-bytes", "2000000"],
            restarts: 0, logged: "is longer than the limit of 1048576 bytes"),
        Fault(
            // A rate any host reads faster than, however loaded the machine: the host reads a flood in turns (the
            // plugin's pipe holds back the rest), so what it measures is its own reading rate.
            description: "a flood of messages (rate-limited, quarantined)",
            arguments: ["--flood-after", "1", "--flood-lines", "200000"],
            limits: with { $0.maxMessagesPerSecond = 500 }, logged: "more than 500 messages per second"),
        Fault(
            description: "exit during the handshake of a restart",
            arguments: ["--exit-in-handshake", "3", "--faulty-runs", "1"],
            trigger: .signal(SIGKILL), restarts: 2, logged: "before answering 'initialize'"),
        Fault(
            description: "a print to stdout from user code (reported, not fatal)", arguments: ["--print-after", "1"],
            restarts: 0,
            logged: "is not valid JSON"),
        Fault(
            description: "SIGSTOP (caught by the heartbeat)", arguments: [],
            limits: with {
                $0.heartbeatIntervalMs = 100; $0.heartbeatTimeoutMs = 300
            }, trigger: .signal(SIGSTOP),
            logged: "hung: no answer to the heartbeat"),
        Fault(
            description: "SIGKILL from outside", arguments: [], trigger: .signal(SIGKILL),
            logged: "crashed (killed by signal 9 (SIGKILL))"),
    ]

    static func with(_ change: (inout LimitOverrides) -> Void) -> LimitOverrides {
        var limits = LimitOverrides()
        change(&limits)
        return limits
    }
}

/// Fault isolation with the real demo app: its profile tab is played by the misbehaving plugin (same plugin name
/// and type), so the faulty process owns a real node of the composed tree while five healthy plugins serve the rest.
@Suite("Fault isolation: supervision, restart with restore, limits", .heavy, .timeLimit(.minutes(3)))
struct FaultTests {
    static func app(
        _ arguments: [String], limits: LimitOverrides = LimitOverrides(), restart: RestartPolicy? = nil,
        triggerRoute: Bool = true
    ) -> [PluginManifest] {
        TestPlugins.demo().map { plugin in
            guard plugin.name == "profile" else { return plugin }
            return PluginManifest(
                name: "profile", product: "misbehave",
                args: ["--name", "profile", "--type", "profile", "--faulty-runs", "0"]
                    + (triggerRoute ? ["--trigger-route", "fault"] : []) + arguments,
                limits: limits, restart: restart)
        }
    }

    /// Signs in and gives the victim two entries; returns the victim's instance.
    static func prepare(_ host: HostHandle) async throws -> InstanceID {
        _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
        let tree = await host.snapshot()
        let profile = try #require(tree.find("profile", "profile"))
        _ = try await host.navigate(from: profile.id, [.route("sample", ["id": "1"]), .route("sheet")])
        _ = try await host.navigate(from: try #require(tree.find("todos", "todos")).id, [.route("todo", ["id": "7"])])
        return profile.id
    }

    /// The rest of the app answers: chains through two Swift plugins, a deep link through three, a Node tab.
    static func othersServe(_ host: HostHandle) async throws {
        let tree = await host.snapshot()
        let todos = try #require(tree.find("todos", "todos"))
        for round in 0..<5 {
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": round % 2 == 0 ? "1" : "42"])])
            _ = try await host.navigate(from: todos.id, [.popLast])
        }
        _ = try await host.open("switchyard://projects/p1")
        _ = try await host.navigate(
            from: try #require(await host.snapshot().find("projects", "projects")).id, [.popToRoot])
        _ = try await host.open("switchyard://todos")
    }

    /// The snapshot with every node served (what it reads as when no plugin is down).
    static func served(_ tree: TreeSnapshot) -> TreeSnapshot {
        var copy = tree
        for index in copy.instances.indices {
            copy.instances[index].status = .ok
            copy.instances[index].unavailableReason = nil
        }
        return copy
    }

    @Test(
        "the host stays up, the others keep being served, the victim is restarted or reported, the tree is unchanged",
        arguments: Fault.all)
    func fault(_ fault: Fault) async throws {
        let logs = LogCapture()
        try await withHost(Self.app(fault.arguments, limits: fault.limits), root: TestPlugins.demoRoot, logs: logs) {
            host in
            let events = EventLog(host)
            let victim = try await Self.prepare(host)
            let pid = try #require(await host.status().first { $0.name == "profile" }?.pid)

            // The fault, and the rest of the app used while it happens.
            async let triggered: Result<NavigateRequest.Result, ResponseError> = {
                switch fault.trigger {
                case .route:
                    do throws(ResponseError) {
                        return .success(try await host.navigate(from: victim, [.route("fault")]))
                    } catch {
                        return .failure(error)
                    }
                case .signal(let number):
                    await host.signal(plugin: "profile", number)
                    return .success(NavigateRequest.Result(revision: 0, instance: victim))
                }
            }()
            try await Self.othersServe(host)
            let outcome = await triggered
            if let expected = fault.triggerError {
                guard case .failure(let error) = outcome else {
                    Issue.record("the triggering request succeeded; expected \(expected.name)")
                    return
                }
                #expect(error.code == expected, "\(error)")
                #expect(error.message.contains("profile"), "the error names the plugin: \(error.message)")
            }
            let before = Self.served(await host.snapshot())

            if fault.restarts > 0 {
                try await events.waitUntilReady(host, "profile", restarts: fault.restarts)
                let status = try #require(await host.status().first { $0.name == "profile" })
                #expect(status.restarts == fault.restarts)
                #expect(status.pid != pid)
                #expect(!SystemProcess.isRunning(pid))
                // While it was down, its node read as unavailable, with the reason.
                #expect(
                    events.all.contains { event in
                        if case .pluginChanged(let status) = event {
                            status.name == "profile" && status.state != .ready && status.error != nil
                        } else {
                            false
                        }
                    })
            } else {
                try await logs.waitFor(fault.logged)
                #expect(await host.status().first { $0.name == "profile" }?.restarts == 0)
            }
            try await logs.waitFor(fault.logged)
            // Typed, and naming the plugin (and, for a bad line, the line).
            let line = try #require(logs.all.first { $0.contains(fault.logged) })
            #expect(line.contains("profile"), "\(line)")
            if fault.restarts == 0 { #expect(line.contains("plugin 'profile': line "), "\(line)") }

            // The tree reads as it did before the fault, restored instance state included, and the victim serves.
            let after = await host.snapshot()
            #expect(after == before)
            #expect(after.instances.allSatisfy { $0.status == .ok })
            _ = try await host.navigate(from: victim, [.route("sample", ["id": "2"])])
            try await Self.othersServe(host)
        }
    }

    @Test(
        "a Swift SDK plugin SIGKILLed is restarted and its instances restored with their state: routes on them work",
        arguments: Tier.selected)
    func restoreWithState(_ tier: Tier) async throws {
        try await withHost(TestPlugins.demo(), tier: tier, root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            let todos = try #require(await host.snapshot().find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "7"]), .route("share", ["id": "42"])])
            let share = try #require(await host.snapshot().find("todos", "share"))
            #expect(share.state == ["todo": "42"])
            let before = await host.snapshot()

            await host.signal(plugin: "todos", SIGKILL)
            try await events.waitUntilReady(host, "todos", restarts: 1)
            #expect(await host.snapshot() == before)
            // The restarted process knows the share flow (a local coordinator with state) and the todos stack.
            let landed = try await host.navigate(from: share.id, [.route("pickProject", ["id": "p1"])])
            #expect(await host.snapshot().instance(landed.instance)?.type == "project")
            _ = try await host.navigate(from: todos.id, [.popToRoot])
            #expect(await host.snapshot().find("todos", "todos")?.entries == [])
        }
    }

    @Test("restart intensity: a plugin crashing in a loop is failed after N restarts in T s; the rest of the app works")
    func restartIntensity() async throws {
        let logs = LogCapture()
        // Crashes at its third message in every run: initialize, initialized, then whatever comes next.
        let policy = RestartPolicy(
            policy: .permanent, maxRestarts: 3, windowSeconds: 60, backoffMs: 10, maxBackoffMs: 40)
        let plugins = Self.app(
            ["--crash-after", "3", "--faulty-runs", "1,2,3,4,5,6"], limits: Fault.with { $0.heartbeatIntervalMs = 50 },
            restart: policy, triggerRoute: false)
        try await withHost(plugins, root: TestPlugins.demoRoot, logs: logs) { host in
            let events = EventLog(host)
            let victim = try await Self.prepare(host)
            let before = Self.served(await host.snapshot())
            await host.signal(plugin: "profile", SIGKILL)
            try await events.waitForPlugins(host, "profile failed") { $0["profile"]?.state == .failed }
            let status = try #require(await host.status().first { $0.name == "profile" })
            #expect(status.restarts == 3)
            #expect(
                status.error?.message.contains("restarted 3 times within 60 s; giving up") == true,
                "\(String(describing: status.error))")
            try await logs.waitFor("giving up")

            // Its nodes keep their place, marked unavailable with the reason; requests to it fail at once.
            let tree = await host.snapshot()
            #expect(Self.served(tree) == before)
            #expect(tree.revision == before.revision)
            let node = try #require(tree.instance(victim))
            #expect(node.status == .unavailable)
            #expect(node.unavailableReason?.contains("giving up") == true)
            // "At once" means without asking the plugin: the refusal says it is unavailable, not that it timed out.
            let refusal = await #expect(throws: ResponseError.self) {
                try await host.navigate(from: victim, [.route("sample", ["id": "3"])])
            }
            #expect(refusal?.code != .timeout, "\(String(describing: refusal))")
            // A pop needs no answer from the owner: the tree follows, the failed plugin is just not told.
            _ = try? await host.navigate(from: victim, [.popLast])
            try await Self.othersServe(host)
            // And it stays failed: no more restarts.
            #expect(await host.status().first { $0.name == "profile" }?.restarts == 3)
        }
    }

    @Test(
        "fuzz through the real host: thousands of mutated protocol lines; the host serves on, the fuzzer is quarantined",
        arguments: [1, 7, 23] as [UInt64])
    func fuzzThroughHost(_ seed: UInt64) async throws {
        let logs = LogCapture()
        let plugins = [
            TestPlugins.swiftHello(),
            TestPlugins.misbehave("fuzzer", ["--fuzz-lines", "5000", "--fuzz-seed", "\(seed)", "--faulty-runs", "0"]),
        ]
        try await withHost(plugins, logs: logs) { host in
            let events = EventLog(host)
            // The other plugin answers all along.
            for _ in 0..<50 { _ = try await host.ping("hello-swift") }
            try await events.waitUntilReady(host, "fuzzer", restarts: 1)
            try await logs.waitFor("plugin 'fuzzer'")
            #expect(logs.contains("quarantined"))
            // One verdict, logged once; what the fuzzer still had in the pipe afterwards is discarded, not judged.
            let verdicts = logs.all.filter { $0.contains("killing plugin 'fuzzer'") }
            #expect(verdicts.count == 1, "\(verdicts)")
            _ = try await host.ping("fuzzer")
            _ = try await host.ping("hello-swift")
        }
    }

    @Test("switchyard chaos, briefly: requests under kills, stops and floods; none lost, each failure typed")
    func chaos() async throws {
        let report = try TestSweep.temporaryDirectory() + "/chaos.json"
        let cli = try CLIProcess([
            "chaos", "--duration", "4", "--fault-interval-ms", "700", "--seed", "3", "--rate", "100", "--report-json",
            report,
        ])
        cli.closeStdin()
        #expect(try await cli.waitForExit(seconds: 90) == 0, "\(cli.stderr.suffix(20))")
        let json = try JSONParser.parse(try FileSystem.readFile(report))
        #expect(json["lost"] == 0)
        let sent = try #require(json["sent"]?.intValue)
        #expect(sent > 0)
        #expect(json["answered"]?.intValue.map { $0 + (json["failedTyped"]?.intValue ?? 0) } == sent)
        #expect((json["restarts"]?.intValue ?? 0) >= 1)
        #expect(cli.stdout.contains { $0.contains("lost                     0") })
    }

    @Test("transient restarts only after an abnormal exit; temporary never restarts")
    func policies() async throws {
        let plugins = [
            PluginManifest(
                name: "transient-clean", product: "misbehave", args: ["--exit-after", "3", "--exit-status", "0"],
                restart: RestartPolicy(policy: .transient)),
            PluginManifest(
                name: "transient-crash", product: "misbehave", args: ["--crash-after", "3", "--faulty-runs", "0"],
                restart: RestartPolicy(policy: .transient)),
            PluginManifest(
                name: "temporary", product: "misbehave", args: ["--crash-after", "3"],
                restart: RestartPolicy(policy: .temporary)),
        ]
        try await withHost(plugins) { host in
            let events = EventLog(host)
            for name in ["transient-clean", "transient-crash", "temporary"] { _ = try? await host.ping(name) }
            try await events.waitForPlugins(host, "every plugin settled") { latest in
                latest["transient-crash"]?.state == .ready && latest["transient-crash"]?.restarts == 1
                    && latest["temporary"]?.state == .failed && latest["transient-clean"]?.state == .stopped
            }
            let statuses = await host.status()
            #expect(statuses.first { $0.name == "temporary" }?.restarts == 0)
            #expect(statuses.first { $0.name == "transient-crash" }?.restarts == 1)
            #expect(statuses.first { $0.name == "transient-clean" }?.restarts == 0)
            #expect(statuses.first { $0.name == "transient-clean" }?.state == .stopped)
        }
    }
}
