import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The resource limits of a fault experiment (`plugin/limits`, spec §22.5), each put on a real plugin's running
/// process through the host, each with its own outcome and its healing step. The target is the root's plugin; the
/// bystander beside it must never get a verdict (``PipeFaultTests/withFaultApp(limits:targetArguments:startTimeoutMs:_:)``
/// checks it).
@Suite("Resource faults: memory, CPU and descriptor limits, each healed", .heavy, .timeLimit(.minutes(1)))
struct ResourceFaultTests {
    private static func targetPID(_ host: HostHandle) async throws -> Int32 {
        try #require(await host.status().first { $0.name == "target" }?.pid)
    }

    /// The process's state letter (`/proc/PID/stat`, after the command's closing parenthesis): `T` while stopped.
    private static func processState(_ pid: Int32) -> Character? {
        guard let stat = try? FileSystem.readFile("/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: stat, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].first { $0 != " " }
    }

    @Test("memory: the target's allocation fails under the limit; a crash, a restart without the limit, a whole tree")
    func memoryLimit() async throws {
        try await PipeFaultTests.withFaultApp(targetArguments: ["--allocate-on-route", "sample:64"]) {
            host, events, logs in
            // 64 MiB is nothing to it without a limit.
            #expect(await PipeFaultTests.navigate(host, count: 1) == 2)
            let before = await host.snapshot()
            let pid = try await Self.targetPID(host)
            let unlimited = try ResourceLimits.get(.addressSpace, of: pid).soft
            let result = try await host.setLimits(.init(plugin: "target", memoryBytes: 16 << 20))
            #expect(result.pid == pid)
            let mechanism = try #require(result.memory)
            if mechanism == .rlimit {
                #expect(try ResourceLimits.get(.addressSpace, of: pid).soft < unlimited)
            }
            #expect(result.cpu == nil && result.descriptors == nil)
            // The push needs 64 MiB: the allocation fails (RLIMIT_AS) or the OOM killer ends it (memory.max).
            await #expect(throws: ResponseError.self) {
                try await host.navigate([.route("sample", ["id": "big"])])
            }
            // A crash of its own (a failed allocation traps; the OOM killer's SIGKILL is one too), not a verdict.
            try await logs.waitFor("restarting plugin 'target' (crashed")
            #expect(!logs.contains("killing plugin 'target'"))
            try await events.waitUntilReady(host, "target", restarts: 1)
            try await logs.waitFor("plugin 'target' restored: 1 of 1 instances")
            // The restarted process is a new one, spawned without the limit: healed by the restart.
            let restarted = try await Self.targetPID(host)
            #expect(restarted != pid)
            #expect(try ResourceLimits.get(.addressSpace, of: restarted).soft == unlimited)
            let after = await host.snapshot()
            #expect(after.instances.count == before.instances.count)
            #expect(after.instances.first?.entries?.count == before.instances.first?.entries?.count)
            #expect(await PipeFaultTests.navigate(host, count: 2) == 4)
        }
    }

    @Test("memory limit healed before it is met: the previous limit is back and the plugin allocates again")
    func memoryLimitHealed() async throws {
        try await PipeFaultTests.withFaultApp(targetArguments: ["--allocate-on-route", "sample:64"]) { host, _, _ in
            let pid = try await Self.targetPID(host)
            let previous = try ResourceLimits.get(.addressSpace, of: pid).soft
            _ = try await host.setLimits(.init(plugin: "target", memoryBytes: 16 << 20))
            let healed = try await host.setLimits(.init(plugin: "target"))
            #expect(healed == PluginLimitsRequest.Result(pid: pid))
            #expect(try ResourceLimits.get(.addressSpace, of: pid).soft == previous)
            #expect(await PipeFaultTests.navigate(host, count: 2) == 4)
            #expect(await host.status().first?.restarts == 0)
        }
    }

    @Test(
        "CPU: a duty cycle holds the target part of each period; it keeps answering, its heartbeat is met, no verdict")
    func cpuLimit() async throws {
        var limits = LimitOverrides()
        limits.heartbeatIntervalMs = 300
        limits.heartbeatTimeoutMs = 700
        try await PipeFaultTests.withFaultApp(limits: limits) { host, _, logs in
            let pid = try await Self.targetPID(host)
            // Held 60 ms of every 100: within a quarter of the 700 ms heartbeat timeout.
            let result = try await host.setLimits(.init(plugin: "target", cpuPercent: 40, cpuPeriodMs: 100))
            let mechanism = try #require(result.cpu)
            if mechanism == .dutyCycle {
                // Held most of the time: seen stopped at once, or within a few periods on a loaded machine.
                var seenHeld = false
                for _ in 0..<200 where !seenHeld {
                    seenHeld = Self.processState(pid) == "T"
                    if !seenHeld { try await Task.sleep(for: .milliseconds(5)) }
                }
                #expect(seenHeld, "the duty cycle never held the target")
            }
            #expect(await PipeFaultTests.navigate(host, count: 10) == 20)
            // The fault's duration: idle, so the heartbeat pings it three times over, interval + timeout each.
            try await Task.sleep(for: .milliseconds(3 * (300 + 700)))
            #expect(!logs.contains("killing plugin 'target'"))
            #expect(await host.status().first?.restarts == 0)
            // Healed: the cycle ends with the process running.
            _ = try await host.setLimits(.init(plugin: "target"))
            #expect(Self.processState(pid) != "T")
            #expect(await PipeFaultTests.navigate(host, count: 2) == 4)
            #expect(await host.status().first?.restarts == 0)
        }
    }

    @Test("descriptors: opening fails inside the target, which reports its own error; the protocol goes on; healed")
    func descriptorLimit() async throws {
        try await PipeFaultTests.withFaultApp(targetArguments: ["--open-on-route", "sample:16"]) { host, _, logs in
            #expect(await PipeFaultTests.navigate(host, count: 1) == 2)
            let pid = try await Self.targetPID(host)
            let previous = try ResourceLimits.get(.descriptors, of: pid).soft
            let result = try await host.setLimits(.init(plugin: "target", descriptors: 4))
            #expect(result == PluginLimitsRequest.Result(pid: pid, descriptors: .rlimit))
            do throws(ResponseError) {
                _ = try await host.navigate([.route("sample", ["id": "files"])])
                Issue.record("32 descriptors were opened under a limit of 4 more")
            } catch {
                #expect(error.message.contains("EMFILE"), "\(error)")
            }
            try await logs.waitFor("misbehave: cannot open descriptors for 'sample'")
            // Its protocol is intact: it answers, and nobody judged it.
            _ = try await host.ping("target")
            #expect(!logs.contains("killing plugin 'target'"))
            #expect(await host.status().first?.restarts == 0)
            _ = try await host.setLimits(.init(plugin: "target"))
            #expect(try ResourceLimits.get(.descriptors, of: pid).soft == previous)
            #expect(await PipeFaultTests.navigate(host, count: 2) == 4)
        }
    }

    @Test("limits are refused on a host that does not take faults, and bad ones name their field")
    func refused() async throws {
        _ = try await withHost([TestPlugins.misbehave("target", [])]) { host in
            do throws(ResponseError) {
                _ = try await host.setLimits(.init(plugin: "target", descriptors: 4))
                Issue.record("a limit was taken without --allow-faults")
            } catch {
                #expect(error.code == .notAllowed)
            }
        }
        try await PipeFaultTests.withFaultApp { host, _, _ in
            let pid = try await Self.targetPID(host)
            let previous = try ResourceLimits.get(.descriptors, of: pid).soft
            let bad: [(PluginLimitsRequest.Params, String)] = [
                (.init(plugin: "nobody", descriptors: 4), "plugin"),
                // Checked whole before anything changes: the good descriptor limit is not applied either.
                (.init(plugin: "target", memoryBytes: -1, descriptors: 4), "memoryBytes"),
                (.init(plugin: "target", cpuPercent: 100), "cpuPercent"),
                (.init(plugin: "target", cpuPeriodMs: 100), "cpuPeriodMs"),
                // Held 9 s of every 10: past any sane heartbeat's deadline.
                (.init(plugin: "target", cpuPercent: 10, cpuPeriodMs: 10_000), "cpuPeriodMs"),
            ]
            for (params, field) in bad {
                do throws(ResponseError) {
                    _ = try await host.setLimits(params)
                    Issue.record("\(params) was taken")
                } catch {
                    #expect(error.code == .invalidParams)
                    #expect(error.data?["field"] == .string(field), "\(error)")
                }
            }
            #expect(try ResourceLimits.get(.descriptors, of: pid).soft == previous)
        }
    }
}
