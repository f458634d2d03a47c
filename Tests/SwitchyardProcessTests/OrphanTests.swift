import Glibc
import SwitchyardHostTestSupport
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Children never outlive the host: after a normal exit, SIGTERM or SIGKILL of `switchyard run`, no plugin is left.
@Suite("No plugin outlives its host", .heavy, .timeLimit(.minutes(1)))
struct OrphanTests {
    /// A manifest with plugins of every temper: well-behaved Swift and Python, one that ignores EOF and SIGTERM.
    static func manifest() throws -> String {
        try temporaryManifest(
            """
            {"plugins": [
              {"name": "hello-swift", "product": "HelloPlugin"},
              {"name": "hello-python", "command": ["\(TestPlugins.python)", "\(packageRoot)/Plugins/python/hello.py"]},
              {"name": "stubborn", "product": "misbehave", "args": ["--ignore-eof", "--ignore-sigterm"]},
              {"name": "frozen", "product": "misbehave", "args": ["--ignore-eof"]}
            ]}
            """)
    }

    /// Starts the CLI host and returns it with the pids of its plugin processes (not the guardian).
    static func startHost() async throws -> (CLIProcess, [Int32]) {
        let cli = try CLIProcess(["run", "--manifest", try manifest(), "--log-level", "info", "--no-socket"])
        try await cli.waitForStderr("switchyard: ready (4/4 plugins")
        let children = SystemProcess.childPIDs(of: cli.pid)
        #expect(children.count == 5, "4 plugins and the guardian, got \(children)")
        return (cli, children)
    }

    @Test("SIGTERM: the host runs the shutdown ladder, exits 0 and leaves no plugin behind")
    func sigterm() async throws {
        let (cli, children) = try await Self.startHost()
        cli.signal(SIGTERM)
        #expect(try await cli.waitForExit() == 0)
        for pid in children {
            #expect(SystemProcess.waitForExit(pid, milliseconds: 5_000), "pid \(pid) survived SIGTERM of the host")
        }
    }

    @Test("SIGKILL: the guardian kills every plugin, even one that ignores EOF and one that is stopped")
    func sigkill() async throws {
        let (cli, children) = try await Self.startHost()
        let frozen = try #require(
            children.first { pid in
                (try? FileSystem.readFile("/proc/\(pid)/environ")).map {
                    String(decoding: $0, as: UTF8.self).contains("SWITCHYARD_PLUGIN_NAME=frozen")
                } ?? false
            })
        #expect(SystemProcess.kill(frozen, SIGSTOP))
        cli.signal(SIGKILL)
        _ = try await cli.waitForExit()
        for pid in children {
            #expect(SystemProcess.waitForExit(pid, milliseconds: 5_000), "pid \(pid) survived SIGKILL of the host")
        }
    }
}
