import Foundation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Issue 30, item 6: the studio on a port in use, and clients waiting for a host, each through the real `switchyard`
/// (and `switchyard-studio`) processes: the message says what, where and how to fix it, with status 69.
@Suite("the first hour: the studio's port and waiting for a host", .heavy, .studioBuilt, .timeLimit(.minutes(3)))
struct HostWaitTests {
    /// A studio serving on a port the system picked (`--port 0`), for a socket where no host runs (`--wait`: it serves
    /// anyway); its port, read from the URL it printed.
    static func studioOnAFreePort(_ socket: String) async throws -> (studio: CLIProcess, port: Int) {
        let studio = try CLIProcess(["studio", "--socket", socket, "--port", "0", "--wait"])
        do {
            let line = try await studio.waitForStdout("switchyard studio: http://127.0.0.1:")
            let match = try #require(line.firstMatch(of: /http:\/\/127\.0\.0\.1:(\d+)\/[0-9a-f]{32}\/$/))
            let port = try #require(Int(match.1))
            #expect(port > 0, "\(line)")
            return (studio, port)
        } catch {
            studio.signal(SIGKILL)
            _ = try? await studio.waitForExit()
            throw error
        }
    }

    @Test(
        "a studio on a port in use: status 69, the port named and `--port 0` as the fix, from `switchyard studio`, `switchyard-studio` and `run --studio` (which names --studio-port and leaves no host behind); --port 0 prints the port bound"
    )
    func portInUse() async throws {
        let folder = try TestSweep.temporaryDirectory()
        let socket = "\(folder)/host.sock"
        let (first, port) = try await Self.studioOnAFreePort(socket)
        defer { first.signal(SIGKILL) }

        let studio = try await runSwitchyard(["studio", "--socket", socket, "--port", "\(port)", "--wait"])
        #expect(studio.status == 69, "\(studio.errorText)")
        #expect(studio.stdout.isEmpty)
        #expect(
            studio.stderr == [
                "switchyard studio: waiting for the host at \(socket) to listen (--wait: as long as it takes)",
                "switchyard-studio: error: port \(port) on 127.0.0.1 is already in use by another program",
                "  choose another --port, or --port 0 to let the system pick a free one (the URL printed names it)",
            ])
        try Troubleshooting.check(
            "studio-port-in-use", studio.stderr.dropFirst().joined(separator: "\n"), replacing: [("\(port)", "8080")])

        let server = try CLIProcess(
            ["--socket", socket, "--port", "\(port)"], executable: StudioBuilt.executable)
        server.closeStdin()
        #expect(try await server.waitForExit() == 69)
        #expect(
            server.stderr.first
                == "switchyard-studio: error: port \(port) on 127.0.0.1 is already in use by another program")

        let runSocket = "\(folder)/run.sock"
        let run = try await runSwitchyard([
            "run", "--studio", "--studio-port", "\(port)", "--socket", runSocket, "--script", "-",
        ])
        #expect(run.status == 69, "\(run.errorText)")
        #expect(
            run.stderr.suffix(2) == [
                "switchyard-studio: error: port \(port) on 127.0.0.1 is already in use by another program",
                "  choose another --studio-port, or --studio-port 0 to let the system pick a free one (the URL printed names it)",
            ], "\(run.errorText)")
        #expect(!FileSystem.exists(runSocket), "the host was left serving")

        first.signal(SIGTERM)
        _ = try await first.waitForExit()
    }

    @Test(
        "a studio for an app with no host (a mistyped --app) says which app and socket it waits for, and gives up with status 69, naming the apps that do run"
    )
    func studioGivesUp() async throws {
        let (environment, _) = try FirstHourCLITests.runtime()
        let result = try await runSwitchyard(
            ["studio", "--app", "dmeo", "--give-up-ms", "300"], environment: environment)
        #expect(result.status == 69, "\(result.errorText)")
        #expect(result.stdout.isEmpty)
        let socket = "\(environment["XDG_RUNTIME_DIR"] ?? "")/switchyard/dmeo.sock"
        #expect(
            result.stderr == [
                "switchyard studio: waiting up to 300 ms for the host of app 'dmeo' at \(socket) to listen (--wait: as long as it takes)",
                "switchyard: error: no host listened within 300 ms: the host of app 'dmeo' at \(socket) is not running (is `switchyard run` running?)",
                "  no host runs here; reach one with --app NAME or --socket PATH, or pass --wait to serve until a host starts",
            ])
        #expect(!FileSystem.exists(socket))
    }

    @Test(
        "a client facing a host that listens but does not answer gives up after its limit with status 69, naming the socket and --wait"
    )
    func clientGivesUp() async throws {
        let folder = try TestSweep.temporaryDirectory()
        let socket = "\(folder)/mute.sock"
        // A "host" that accepts connections and never answers: what a client sees of a host still starting.
        let mute = try CLIProcess(
            [
                "-c",
                """
                import socket, sys
                server = socket.socket(socket.AF_UNIX)
                server.bind(sys.argv[1])
                server.listen()
                print("listening", flush=True)
                connections = []
                while True:
                    connections.append(server.accept())
                """, socket,
            ], executable: "python3")
        defer { mute.signal(SIGKILL) }
        _ = try await mute.waitForStdout("listening")

        for command in [["status"], ["nav", "@root", "push", "x"]] {
            let result = try await runSwitchyard(command + ["--socket", socket, "--give-up-ms", "300"])
            #expect(result.status == 69, "\(command): \(result.errorText)")
            #expect(
                result.stderr.last
                    == "switchyard: error: no answer from the host at \(socket) within 300 ms (is it still starting its plugins?); --wait waits as long as it takes",
                "\(command): \(result.errorText)")
        }
    }

    @Test("with --wait a client says which app and socket it waits for, and goes on once a host for that app starts")
    func clientWaits() async throws {
        let (environment, _) = try FirstHourCLITests.runtime()
        let socket = "\(environment["XDG_RUNTIME_DIR"] ?? "")/switchyard/later.sock"
        let client = try CLIProcess(["status", "--app", "later", "--wait"], environment: environment)
        defer { client.signal(SIGKILL) }
        client.closeStdin()
        _ = try await client.waitForStderr(
            "switchyard: waiting for the host of app 'later' at \(socket) to listen (--wait: as long as it takes)")
        let host = try await FirstHourCLITests.startHost(environment, ["--app", "later"])
        defer { host.signal(SIGKILL) }
        #expect(try await client.waitForExit() == 0, "\(client.stderr)")
        #expect(client.stdout.first?.hasPrefix("revision ") == true, "\(client.stdout)")
        host.signal(SIGTERM)
        _ = try await host.waitForExit()
    }
}
