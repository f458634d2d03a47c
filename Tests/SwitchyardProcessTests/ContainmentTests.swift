import Foundation
import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
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
        [
            ("setsid", ["--descendants", "setsid", file]), ("daemon", ["--descendants", "daemon", file]),
            ("both", ["--descendants", "both", file]),
        ]
    }

    static func pidFile() -> String {
        ((try? TestSweep.temporaryDirectory()) ?? "/tmp") + "/descendants-\(UInt32.random(in: 0...UInt32.max)).pids"
    }

    static func pids(in file: String) -> [Int32] {
        guard let bytes = try? FileSystem.readFile(file) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
    }

    /// The descendants in `file`, named by pid and start time, read while they are known to be alive: a pid read
    /// later may already belong to another test's process.
    static func identities(in file: String, after known: Int = 0) -> [ProcessIdentity] {
        pids(in: file).dropFirst(known).compactMap(ProcessIdentity.init)
    }

    /// The current children of `pid` (the guardian, the plugins), by identity.
    static func children(of pid: Int32) -> [ProcessIdentity] {
        SystemProcess.childPIDs(of: pid).compactMap(ProcessIdentity.init)
    }

    /// Ends whatever a failed test left behind, and the pid file.
    static func cleanUp(_ file: String, _ processes: [ProcessIdentity]) {
        for process in processes where process.pid > 1 { process.signal(SIGKILL) }
        _ = FileSystem.remove(file)
    }

    static func expectAllGone(_ processes: [ProcessIdentity], _ what: String) {
        for process in processes {
            #expect(process.waitForExit(milliseconds: 5_000), "\(process) survived \(what)")
        }
    }

    /// Starts `switchyard run` with the three plugins under `mechanism`; returns it once they are ready.
    static func startCLI(
        _ mechanism: ContainmentMechanism, file: String
    ) async throws -> (CLIProcess, [ProcessIdentity]) {
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
        return (cli, identities(in: file))
    }

    static func guardian(of host: Int32) -> Int32? {
        SystemProcess.childPIDs(of: host).first { pid in
            (try? FileSystem.readFile("/proc/\(pid)/cmdline")).map {
                String(decoding: $0, as: UTF8.self).contains("switchyard-guardian")
            } ?? false
        }
    }

    @Test("shutdown of an in-process host ends every descendant", arguments: kernelEnforced)
    func shutdown(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        var known: [ProcessIdentity] = []
        defer { Self.cleanUp(file, known) }
        let options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500, containment: mechanism)
        known = try await withHost(Self.plugins(file).map { TestPlugins.misbehave($0.name, $0.args) }, options: options)
        { host in
            let containment = await host.containment()
            #expect(containment?.mechanism == mechanism.rawValue)
            #expect(containment?.guardian != nil)
            #expect(Self.pids(in: file).count == 3)
            return Self.identities(in: file)
        }
        Self.expectAllGone(known, "shutdown")
    }

    @Test(
        "SIGTERM of `switchyard run` ends every descendant",
        arguments: ContainmentMechanism.allCases.filter { $0 != .none })
    func sigterm(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        var known: [ProcessIdentity] = []
        defer { Self.cleanUp(file, known) }
        let (cli, descendants) = try await Self.startCLI(mechanism, file: file)
        known = descendants + Self.children(of: cli.pid)
        cli.signal(SIGTERM)
        #expect(try await cli.waitForExit() == 0)
        Self.expectAllGone(known, "SIGTERM of the host (\(mechanism))")
    }

    @Test("SIGKILL of `switchyard run` ends every descendant", arguments: kernelEnforced)
    func sigkill(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        var known: [ProcessIdentity] = []
        defer { Self.cleanUp(file, known) }
        let (cli, descendants) = try await Self.startCLI(mechanism, file: file)
        known = descendants + Self.children(of: cli.pid)
        cli.signal(SIGKILL)
        _ = try await cli.waitForExit()
        Self.expectAllGone(known, "SIGKILL of the host (\(mechanism))")
    }

    @Test("guardian SIGKILLed, then the host SIGKILLed: nothing survives", arguments: kernelEnforced)
    func guardianThenHost(_ mechanism: ContainmentMechanism) async throws {
        let file = Self.pidFile()
        var known: [ProcessIdentity] = []
        defer { Self.cleanUp(file, known) }
        let (cli, descendants) = try await Self.startCLI(mechanism, file: file)
        known = descendants + Self.children(of: cli.pid)
        let first = try #require(Self.guardian(of: cli.pid))
        #expect(SystemProcess.kill(first, SIGKILL))
        try await cli.waitForStderr("switchyard-guardian restarted")
        if mechanism == .pidNamespace {
            // The plugins died with the namespace; wait until they are back, in the new one.
            for name in ["setsid", "daemon", "both"] {
                try await cli.waitForStderr("plugin '\(name)' ended with its PID namespace")
            }
        }
        // Whatever is alive now (the new guardian, restarted plugins and their descendants) must end too.
        known += Self.children(of: cli.pid) + Self.identities(in: file, after: descendants.count)
        cli.signal(SIGKILL)
        _ = try await cli.waitForExit()
        Self.expectAllGone(known, "SIGKILL of the guardian, then of the host (\(mechanism))")
    }

    @Test("guardian SIGKILLed while the host lives: a new one starts and the plugins are ready again")
    func guardianDies() async throws {
        let file = Self.pidFile()
        var known: [ProcessIdentity] = []
        defer { Self.cleanUp(file, known) }
        let options = HostOptions(
            productsDirectory: productsDirectory, shutdownGraceMs: 500, containment: .pidNamespace)
        known = try await withHost(Self.plugins(file).map { TestPlugins.misbehave($0.name, $0.args) }, options: options)
        { host in
            let events = EventLog(host)
            var known = Self.identities(in: file)
            let first = try #require(await host.containment()?.guardian)
            #expect(SystemProcess.kill(first, SIGKILL))
            for name in ["setsid", "daemon", "both"] { try await events.waitUntilReady(host, name, restarts: 1) }
            // The kernel ended the old namespace with everything in it, escaped descendants included.
            Self.expectAllGone(known, "the death of the PID namespace's init")
            known += Self.identities(in: file, after: 3)
            let second = try #require(await host.containment()?.guardian)
            #expect(second != first)
            #expect(SystemProcess.isRunning(second))
            return known
        }
    }
}
