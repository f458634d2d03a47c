import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

@Suite("Plugin lifecycle: handshake, faults, descriptors, shutdown", .heavy, .timeLimit(.minutes(1)))
struct LifecycleTests {
    @Test("the real Swift and Python plugins complete the handshake and answer $/ping")
    func handshake() async throws {
        try await withHost([TestPlugins.swiftHello(), TestPlugins.pythonHello()]) { host in
            let statuses = await host.status()
            #expect(statuses.map(\.name) == ["hello-swift", "hello-python"])
            #expect(statuses.allSatisfy { $0.state == .ready }, "\(statuses)")
            #expect(statuses.map(\.version) == ["1.0.0", "1.0.0"])
            _ = try await host.ping("hello-swift")
            _ = try await host.ping("hello-python")
        }
    }

    @Test("unknown version, exit before answering and silence are typed errors naming the plugin; the others serve")
    func handshakeFaults() async throws {
        let plugins = [
            TestPlugins.swiftHello(),
            TestPlugins.misbehave("speaks-v99", ["--speaks", "99"]),
            TestPlugins.misbehave("chooses-v7", ["--answer-version", "7"]),
            TestPlugins.misbehave("exits-early", ["--exit-in-handshake", "3"]),
            TestPlugins.misbehave("silent", ["--hang-in-handshake"], startTimeoutMs: 400),
            TestPlugins.pythonHello(),
        ]
        try await withHost(plugins) { host in
            let statuses = Dictionary(uniqueKeysWithValues: await host.status().map { ($0.name, $0) })
            #expect(statuses["hello-swift"]?.state == .ready)
            #expect(statuses["hello-python"]?.state == .ready)

            for (name, code, phrase) in [
                ("speaks-v99", ErrorCode.unsupportedProtocolVersion, "speaks protocol versions [99]"),
                ("chooses-v7", .unsupportedProtocolVersion, "chose protocol version 7"),
                ("exits-early", .pluginUnavailable, "exited with code 3 before answering"),
                ("silent", .timeout, "no answer to 'initialize' within 400 ms"),
            ] {
                let status = try #require(statuses[name])
                #expect(status.state == .failed, "\(name)")
                let error = try #require(status.error, "\(name) has no error")
                #expect(error.code == code, "\(name): \(error)")
                #expect(error.message.contains("plugin '\(name)'"), "\(error.message)")
                #expect(error.message.contains(phrase), "\(error.message)")
                #expect(error.data?["plugin"] == .string(name))
            }
            // The host goes on serving the plugins that work.
            _ = try await host.ping("hello-swift")
            _ = try await host.ping("hello-python")
            await #expect(throws: ResponseError.self) { try await host.ping("silent") }
        }
    }

    @Test("a plugin's /proc/PID/fd holds exactly 0, 1 and 2")
    func onlyStdioDescriptors() async throws {
        // An inheritable descriptor in the host must not leak into plugins.
        // Under the spawn lock (its contract): not between another test's sweep and fork.
        let leak = SpawnLock.withLock { unsafe open("/dev/null", O_RDONLY) }
        defer { close(leak) }
        try await withHost([TestPlugins.swiftHello(), TestPlugins.pythonHello(), TestPlugins.misbehave("raw", [])]) {
            host in
            for status in await host.status() {
                let pid = try #require(status.pid)
                #expect(SystemProcess.openDescriptors(of: pid) == [0, 1, 2], "\(status.name)")
            }
        }
    }

    @Test("a plugin that stops reading stdin is caught by the byte-bounded write queue; the loop keeps serving")
    func stopsReading() async throws {
        var limits = LimitOverrides()
        limits.maxWriteQueueBytes = 32 * 1024
        limits.requestTimeoutMs = 10_000
        let logs = LogCapture()
        try await withHost(
            [TestPlugins.swiftHello(), TestPlugins.misbehave("deaf", ["--stop-reading-after", "2"], limits: limits)],
            logs: logs
        ) { host in
            // Enough pipelined pings to fill the socket buffers and then the 32 KiB queue.
            let burst = await host.pingBurst("deaf", count: 50_000)
            #expect(burst.answered == 0)
            #expect(burst.errors.contains { $0.code == .limitExceeded && $0.message.contains("not reading its stdin") })
            #expect(logs.contains("stopped reading its stdin"))
            _ = try await host.ping("hello-swift")
            // Killed as hung, then restarted by its (default, permanent) policy.
            try await logs.waitFor("restarting plugin 'deaf'")
            #expect((await host.status().first { $0.name == "deaf" })?.restarts ?? 0 >= 1)
        }
    }

    @Test("a plugin flooding stdout and one flooding stderr cannot stall the loop")
    func floods() async throws {
        let plugins = [
            TestPlugins.swiftHello(),
            TestPlugins.misbehave("stdout-flood", ["--flood-after", "3", "--flood-lines", "300000"]),
            TestPlugins.misbehave("stderr-flood", ["--flood-stderr"]),
        ]
        try await withHost(plugins) { host in
            _ = try? await host.ping("stdout-flood")  // message 3 starts the flood
            for _ in 0..<200 {
                _ = try await host.ping("hello-swift")
            }
        }
    }

    @Test("stderr lines reach the host log prefixed with the plugin's name, each capped in length")
    func stderrForwarded() async throws {
        let logs = LogCapture()
        let long = String(repeating: "z", count: 10_000)
        try await withHost(
            [TestPlugins.misbehave("chatty", ["--say", "hello from stderr", "--say", long])], logs: logs
        ) { _ in
            try await logs.waitFor("[chatty] hello from stderr")
            try await logs.waitFor("[line truncated at 4096 bytes]")
        }
        let truncated = try #require(logs.all.first { $0.contains("line truncated") })
        #expect(truncated.count < 4_200)
    }

    @Test("the shutdown ladder escalates to SIGKILL for a plugin that ignores stdin EOF and SIGTERM")
    func ladderEscalates() async throws {
        let logs = LogCapture()
        // No heartbeat: a heartbeat ping could be message 3 on a slow start, hang the plugin and have it killed as
        // hung before the ladder runs. Message 3 must be the shutdown request.
        var quiet = LimitOverrides()
        quiet.heartbeatIntervalMs = 0
        try await withHost(
            [
                TestPlugins.misbehave(
                    "stubborn", ["--ignore-sigterm", "--ignore-eof", "--hang-after", "3"], limits: quiet)
            ], logs: logs
        ) { host in
            #expect(await host.status().first?.state == .ready)
        }
        #expect(logs.contains("did not exit after stdin closed; sending SIGTERM"))
        #expect(logs.contains("ignored SIGTERM; sending SIGKILL"))
    }
}
