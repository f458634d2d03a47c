import Foundation
import Glibc
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The studio in a real headless Chromium (Debian's `chromium` and `chromium-driver`, driven by Selenium from a Python
/// script, Tests/Browser/studio_test.py) against real hosts and the real `switchyard-studio`.
///
/// Screenshots: `SWITCHYARD_STUDIO_SCREENSHOTS=Docs/studio swift test --filter StudioBrowserTests` writes the
/// README's pictures.
@Suite(
    "Switchyard Studio in a browser", .heavy, .studioBuilt, .timeLimit(.minutes(6)),
    .enabled(if: StudioBrowser.available, "needs chromium and chromium-driver (.ci/run installs them)"))
struct StudioBrowserTests {
    @Test(
        "the acceptance walk on the demo app by tapping only: the forgot-password sheet, sign in with the form, open a todo from its row, complete it, add one through the sheet's form, switch tabs, a project's members, sign out, each step checked against `switchyard tree`, with typed errors at the elements; Python, Swift and Node screens drawn from their content; a reloaded page shows the revisions made before it; the address bar, exact traffic lines, a plugin killed from its fault button, then upgraded from its Upgrade button (same instances, a new process); no console error"
    )
    func walk() async throws {
        let trace = try TestSweep.temporaryDirectory() + "/trace.jsonl"
        try await StudioBrowser.withStudio(["--allow-faults", "--trace", trace]) { url, socket, _ in
            var arguments = [
                "walk", "--url", url, "--switchyard", product("switchyard"), "--socket", socket, "--trace", trace,
            ]
            if let shots = SystemProcess.environmentValue("SWITCHYARD_STUDIO_SCREENSHOTS") {
                arguments += ["--screenshots", shots.hasPrefix("/") ? shots : "\(packageRoot)/\(shots)"]
            }
            try await StudioBrowser.runScript(arguments)
        }
    }

    @Test(
        "two tabs on one host stay in sync (with each other and with the CLI); fault buttons are off without --allow-faults; the host going away shows \"disconnected\" and the page reconnects when a host is back"
    )
    func syncAndReconnect() async throws {
        let folder = try TestSweep.temporaryDirectory()
        let socket = "\(folder)/host.sock"
        let manifest = "\(packageRoot)/Plugins/demo/switchyard.json"
        let host = try CLIProcess(["run", "--manifest", manifest, "--socket", socket])
        try await StudioBrowser.ending(host) {
            _ = try await host.waitForStderr("ready (")
            let studio = try CLIProcess(["studio", "--socket", socket])
            try await StudioBrowser.ending(studio) {
                let line = try await studio.waitForStdout("switchyard studio: http")
                let url = String(line[try #require(line.range(of: "http://")).lowerBound...])
                try await StudioBrowser.runScript([
                    "sync", "--url", url, "--switchyard", product("switchyard"), "--socket", socket, "--manifest",
                    manifest,
                ])
            }
        }
    }
}

/// The studio's server from outside, without a browser (the same script, speaking raw HTTP and WebSocket).
@Suite("Switchyard Studio from outside", .heavy, .studioBuilt, .timeLimit(.minutes(4)))
struct StudioServerTests {
    @Test(
        "no token, a wrong one or another Host is 403; an upgrade from another Origin or without the token is refused; bound on 127.0.0.1 only; the relay refuses fault methods (off by default), host/shutdown and an upgrade to a command the page names"
    )
    func refusals() async throws {
        try await StudioBrowser.withStudio([]) { url, socket, _ in
            try await StudioBrowser.runScript(
                ["security", "--url", url, "--switchyard", product("switchyard"), "--socket", socket], python: "python3"
            )
        }
    }

    @Test(
        "a page that never reads costs the host its bounded queue (it answers every request and drops that client); a page that vanishes costs it nothing once gone"
    )
    func slowAndGoneClients() async throws {
        try await StudioBrowser.withStudio([]) { url, socket, host in
            try await StudioBrowser.runScript(
                ["slow", "--url", url, "--switchyard", product("switchyard"), "--socket", socket], python: "python3")
            #expect(
                host.stderr.contains { $0.contains("disconnecting a client that does not read") },
                "\(host.stderr.suffix(20))")
        }
    }
}

/// The studio's relay and the CLI's launcher, without a browser.
@Suite("Switchyard Studio's relay and launcher", .heavy, .studioBuilt, .timeLimit(.minutes(3)))
struct StudioRelayTests {
    @Test(
        "a line from the host larger than the relay's backlog limit reaches the page (it is passed on, then the relay waits for the browser)"
    )
    func linesOverTheLimit() async throws {
        let socket = try TestSweep.temporaryDirectory() + "/host.sock"
        let host = try CLIProcess(["run", "--socket", socket])
        try await StudioBrowser.ending(host) {
            _ = try await host.waitForStderr("ready (")
            let studio = try CLIProcess(
                ["--socket", socket, "--max-pending-bytes", "64"], executable: StudioBuilt.executable)
            try await StudioBrowser.ending(studio) {
                let line = try await studio.waitForStdout("switchyard studio: http")
                let url = String(line[try #require(line.range(of: "http://")).lowerBound...])
                try await StudioBrowser.runScript(
                    ["large", "--url", url, "--switchyard", product("switchyard"), "--socket", socket],
                    python: "python3")
            }
        }
    }

    @Test(
        "run --studio with no switchyard-studio to be found refuses to start before any host runs (no plugin started, no socket)"
    )
    func studioMissing() async throws {
        let folder = try TestSweep.temporaryDirectory()
        // A copy of the CLI alone in a folder, with a PATH that has no studio either.
        let copy = "\(folder)/switchyard"
        // Under the spawn lock, so no child forked meanwhile holds the copy open for writing (ETXTBSY at its exec).
        try SpawnLock.withLock { try FileManager.default.copyItem(atPath: product("switchyard"), toPath: copy) }
        let socket = "\(folder)/host.sock"
        let process = try CLIProcess(
            ["run", "--studio", "--socket", socket, "--manifest", "\(packageRoot)/Plugins/demo/switchyard.json"],
            executable: copy,
            environment: ["PATH": "/usr/bin:/bin", "SWITCHYARD_STUDIO": ""])
        process.closeStdin()
        let status = try await process.waitForExit()
        let stderr = process.stderr.joined(separator: "\n")
        #expect(status != 0, "\(stderr)")
        #expect(stderr.contains("switchyard-studio is not beside"), "\(stderr)")
        #expect(!stderr.contains("ready ("), "a host was started before the studio was looked for:\n\(stderr)")
        #expect(!FileSystem.exists(socket), "a control socket was left at \(socket)")
    }
}

extension StudioRelayTests {
    @Test("SWITCHYARD_STUDIO naming no executable: run --studio says so, names the variable, and starts no host")
    func studioVariableWrong() async throws {
        let folder = try TestSweep.temporaryDirectory()
        let socket = "\(folder)/host.sock"
        let named = "\(folder)/no-such-studio"
        let process = try CLIProcess(
            ["run", "--studio", "--socket", socket, "--manifest", "\(packageRoot)/Plugins/demo/switchyard.json"],
            environment: ["SWITCHYARD_STUDIO": named])
        process.closeStdin()
        let status = try await process.waitForExit()
        let stderr = process.stderr.joined(separator: "\n")
        #expect(status == 69, "\(stderr)")
        #expect(stderr.contains("SWITCHYARD_STUDIO names \(named), which is not an executable file"), "\(stderr)")
        #expect(!stderr.contains("ready ("), "a host was started before the studio was looked for:\n\(stderr)")
    }
}

/// The studio's script run in Chromium (``HeadlessBrowser``), and the processes it needs.
enum StudioBrowser {
    static let available = HeadlessBrowser.available

    static let script = "\(packageRoot)/Tests/Browser/studio_test.py"

    /// Runs `switchyard run --studio` on the demo app with a socket of its own, and `body` with the URL the studio
    /// printed (`switchyard studio: http://127.0.0.1:PORT/TOKEN/`), the socket and the process; ends it afterwards.
    static func withStudio(
        _ arguments: [String], _ body: (_ url: String, _ socket: String, _ host: CLIProcess) async throws -> Void
    ) async throws {
        let socket = try TestSweep.temporaryDirectory() + "/host.sock"
        let host = try CLIProcess(["run", "--studio", "--socket", socket] + arguments)
        try await ending(host) {
            let line = try await host.waitForStderr("switchyard studio: http")
            try await body(String(line[try #require(line.range(of: "http://")).lowerBound...]), socket, host)
        }
    }

    /// Runs one scenario of the script; its output is the failure message when it fails.
    static func runScript(_ arguments: [String], python: String? = nil) async throws {
        try await HeadlessBrowser.runScript(script, arguments, python: python)
    }

    /// Runs `body`, then ends `process` (SIGTERM, then SIGKILL), whether `body` passed or failed.
    static func ending(_ process: CLIProcess, _ body: () async throws -> Void) async throws {
        do { try await body() } catch {
            await stop(process)
            throw error
        }
        await stop(process)
    }

    private static func stop(_ process: CLIProcess) async {
        process.signal(SIGTERM)
        if (try? await process.waitForExit(seconds: 20)) == nil {
            process.signal(SIGKILL)
            _ = try? await process.waitForExit(seconds: 10)
        }
    }
}
