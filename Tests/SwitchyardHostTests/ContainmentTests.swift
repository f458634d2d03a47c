import Foundation
import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardTestSupport
import SwitchyardUV
import Testing

/// Every descendant of a plugin ends with the host, including ones that `setsid()` or double-fork, under each
/// containment mechanism this machine offers (forced through `SWITCHYARD_CONTAINMENT` / ``HostOptions``).
@Suite("Containment of every descendant", .heavy, .timeLimit(.minutes(1)))
struct ContainmentTests {
    /// Mechanisms that contain a SIGKILLed host's escaped descendants (process-group, by design, does not).
    static let kernelEnforced: [ContainmentMechanism] = [.pidNamespace, .cgroup]

    /// Three plugins leaving a setsid'd child, a double-forked child in their group, and a classic daemon (fork,
    /// setsid, fork); each descendant appends its pid to `file` before the plugin answers initialize.
    static func plugins(_ file: String) -> [(name: String, args: [String])] {
        [("setsid", ["--descendants", "setsid", file]), ("daemon", ["--descendants", "daemon", file]),
         ("both", ["--descendants", "both", file])]
    }

    static func pidFile() -> String { ((try? TestSweep.temporaryDirectory()) ?? "/tmp") + "/descendants-\(UInt32.random(in: 0...UInt32.max)).pids" }

    static func pids(in file: String) -> [Int32] {
        guard let bytes = try? FileSystem.readFile(file) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
    }

    /// Ends whatever a failed test left behind, and the pid file.
    static func cleanUp(_ file: String, _ more: [Int32] = []) {
        for pid in pids(in: file) + more where pid > 1 { _ = SystemProcess.kill(pid, SIGKILL) }
        _ = FileSystem.remove(file)
    }

    static func expectAllGone(_ pids: [Int32], _ what: String) {
        for pid in pids {
            #expect(SystemProcess.waitForExit(pid, milliseconds: 5_000), "pid \(pid) survived \(what)")
        }
    }

    /// Starts `switchyard run` with the three plugins under `mechanism`; returns it once they are ready.
    static func startCLI(_ mechanism: ContainmentMechanism, file: String) async throws -> CLIProcess {
        let entries = plugins(file).map { plugin in
            #"{"name": "\#(plugin.name)", "product": "misbehave", "args": ["--name", "\#(plugin.name)", "\#(plugin.args.joined(separator: "\", \""))"]}"#
        }
        let manifest = try temporaryManifest(#"{"plugins": [\#(entries.joined(separator: ", "))]}"#)
        let cli = try CLIProcess(
            ["run", "--manifest", manifest, "--log-level", "info", "--no-socket"],
            environment: ["SWITCHYARD_CONTAINMENT": mechanism.rawValue])
        try await cli.waitForStderr("switchyard: ready (3/3 plugins")
        #expect(cli.stderr.contains { $0.contains("containment: \(mechanism)") }, "startup log: \(cli.stderr)")
        #expect(pids(in: file).count == 3)
        return cli
    }

    static func guardian(of host: Int32) -> Int32? {
        SystemProcess.childPIDs(of: host).first { pid in
            (try? FileSystem.readFile("/proc/\(pid)/cmdline")).map { String(decoding: $0, as: UTF8.self).contains("switchyard-guardian") } ?? false
        }
    }

    @Test("shutdown of an in-process host ends every descendant", arguments: kernelEnforced)
    func shutdown(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        defer { Self.cleanUp(file) }
        let options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500, containment: mechanism)
        try await withHost(Self.plugins(file).map { TestPlugins.misbehave($0.name, $0.args) }, options: options) { host in
            let containment = await host.containment()
            #expect(containment?.mechanism == mechanism.rawValue)
            #expect(containment?.guardian != nil)
            #expect(Self.pids(in: file).count == 3)
        }
        Self.expectAllGone(Self.pids(in: file), "shutdown")
    }

    @Test("SIGTERM of `switchyard run` ends every descendant", arguments: ContainmentMechanism.allCases.filter { $0 != .none })
    func sigterm(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        defer { Self.cleanUp(file) }
        let cli = try await Self.startCLI(mechanism, file: file)
        let children = SystemProcess.childPIDs(of: cli.pid)
        cli.signal(SIGTERM)
        #expect(try await cli.waitForExit() == 0)
        Self.expectAllGone(Self.pids(in: file) + children, "SIGTERM of the host (\(mechanism))")
    }

    @Test("SIGKILL of `switchyard run` ends every descendant", arguments: kernelEnforced)
    func sigkill(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        defer { Self.cleanUp(file) }
        let cli = try await Self.startCLI(mechanism, file: file)
        let children = SystemProcess.childPIDs(of: cli.pid)
        cli.signal(SIGKILL)
        _ = try await cli.waitForExit()
        Self.expectAllGone(Self.pids(in: file) + children, "SIGKILL of the host (\(mechanism))")
    }

    @Test("guardian SIGKILLed, then the host SIGKILLed: nothing survives", arguments: kernelEnforced)
    func guardianThenHost(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        var seen: [Int32] = []
        defer { Self.cleanUp(file, seen) }
        let cli = try await Self.startCLI(mechanism, file: file)
        let first = try #require(Self.guardian(of: cli.pid))
        seen = SystemProcess.childPIDs(of: cli.pid)
        #expect(SystemProcess.kill(first, SIGKILL))
        try await cli.waitForStderr("switchyard-guardian restarted")
        if mechanism == .pidNamespace {
            // The plugins died with the namespace; wait until they are back, in the new one.
            for name in ["setsid", "daemon", "both"] { try await cli.waitForStderr("plugin '\(name)' ended with its PID namespace") }
        }
        seen += SystemProcess.childPIDs(of: cli.pid)
        cli.signal(SIGKILL)
        _ = try await cli.waitForExit()
        Self.expectAllGone(Self.pids(in: file) + seen, "SIGKILL of the guardian, then of the host (\(mechanism))")
    }

    @Test("guardian SIGKILLed while the host lives: a new one starts and the plugins are ready again")
    func guardianDies() async throws {
        let file = Self.pidFile()
        defer { Self.cleanUp(file) }
        let options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500, containment: .pidNamespace)
        try await withHost(Self.plugins(file).map { TestPlugins.misbehave($0.name, $0.args) }, options: options) { host in
            let events = EventLog(host)
            let first = try #require(await host.containment()?.guardian)
            #expect(SystemProcess.kill(first, SIGKILL))
            for name in ["setsid", "daemon", "both"] { try await events.waitUntilReady(host, name, restarts: 1) }
            // The kernel ended the old namespace with everything in it, escaped descendants included.
            Self.expectAllGone(Self.pids(in: file), "the death of the PID namespace's init")
            let second = try #require(await host.containment()?.guardian)
            #expect(second != first)
            #expect(SystemProcess.isRunning(second))
        }
    }
}
