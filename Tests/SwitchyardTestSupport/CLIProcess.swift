import Foundation
package import SwitchyardProtocol
import SwitchyardSystem
import Synchronization

/// A process started by a test (the `switchyard` CLI by default), with its stdout and stderr collected line by line.
///
/// Started through ``ChildProcess`` (the project's own spawn path: only fds 0-2, under the spawn lock) and reaped
/// by pid with a bound, never through Foundation's `Process` (see ``ChildProcess`` for why). It carries
/// `SWITCHYARD_EXIT_WITH_PARENT`, so a `switchyard` left running by a killed test process shuts itself down.
package final class CLIProcess: Sendable {
    private let child: ChildProcess
    private let stdoutLines = LineBuffer()
    private let stderrLines = LineBuffer()

    package init(
        _ arguments: [String], executable: String = product("switchyard"), environment: [String: String] = [:],
        currentDirectory: String = packageRoot
    ) throws {
        TestSweep.once()
        var env = SystemProcess.environment
        env["SWITCHYARD_PRODUCTS_DIR"] = productsDirectory
        env["SWITCHYARD_EXIT_WITH_PARENT"] = "\(SystemProcess.currentPID)"
        // The Studio the `.studioBuilt` suites built (debug), whatever this run's configuration: a release CLI would
        // otherwise build a release Studio of its own, minutes of SwiftNIO inside a test's time limit.
        env["SWITCHYARD_STUDIO"] = StudioBuilt.executable
        for (key, value) in environment { env[key] = value }
        let (out, err) = (stdoutLines, stderrLines)
        child = try ChildProcess(
            [executable] + arguments, environment: env, directory: currentDirectory,
            onStdout: { line in if let line { out.append(line) } else { out.finish() } },
            onStderr: { line in if let line { err.append(line) } else { err.finish() } })
    }

    package var pid: Int32 { child.pid }
    package var stdout: [String] { stdoutLines.withLock { $0 } }
    package var stderr: [String] { stderrLines.withLock { $0 } }

    /// Collected lines, shared between the reader thread and the test.
    final class LineBuffer: Sendable {
        private let lines = Mutex<[String]>([])
        private let finished = Mutex(false)
        let changes = ChangeNotifier()
        func withLock<T>(_ body: (inout [String]) -> T) -> T { lines.withLock { body(&$0) } }
        func append(_ line: String) {
            lines.withLock { $0.append(line) }
            changes.notify()
        }
        func finish() {
            finished.withLock { $0 = true }
            changes.notify()
        }
        var isFinished: Bool { finished.withLock { $0 } }
    }

    /// Writes to the CLI's stdin.
    package func send(_ text: String) {
        child.write(Array(text.utf8))
    }

    package func closeStdin() {
        child.closeStdin()
    }

    /// Waits for a stderr line containing `text` (woken by the reader thread on every line).
    @discardableResult
    package func waitForStderr(_ text: String, seconds: Double = defaultTimeout) async throws -> String {
        try await waitFor(text, in: stderrLines, stream: "stderr", seconds: seconds)
    }

    @discardableResult
    package func waitForStdout(_ text: String, seconds: Double = defaultTimeout) async throws -> String {
        try await waitFor(text, in: stdoutLines, stream: "stdout", seconds: seconds)
    }

    /// Waits until stdout holds more than `index` lines and returns line number `index` (0-based).
    package func stdoutLine(_ index: Int, seconds: Double = defaultTimeout) async throws -> String {
        let lines = stdoutLines
        do {
            try await lines.changes.wait("stdout line \(index + 1)", seconds: seconds) {
                lines.isFinished || lines.withLock { $0.count > index }
            }
        } catch {}
        guard let line = lines.withLock({ $0.count > index ? $0[index] : nil }) else {
            throw TestFailure(
                "no stdout line \(index + 1) within \(seconds) s; stderr:\n" + stderr.joined(separator: "\n"))
        }
        return line
    }

    private func waitFor(_ text: String, in lines: LineBuffer, stream: String, seconds: Double) async throws -> String {
        do {
            try await lines.changes.wait("\(stream) line containing '\(text)'", seconds: seconds) {
                lines.isFinished || lines.withLock { $0.contains { $0.contains(text) } }
            }
        } catch {}
        guard let line = lines.withLock({ $0.first { $0.contains(text) } }) else {
            throw TestFailure(
                "no \(stream) line containing '\(text)' within \(seconds) s; \(stream) was:\n"
                    + lines.withLock { $0.joined(separator: "\n") })
        }
        return line
    }

    /// Waits for the process to exit (a pidfd event, bounded), reaps it and returns its status (128 + signal if
    /// killed), then waits (bounded) for the rest of its output.
    package func waitForExit(seconds: Double = defaultTimeout) async throws -> Int32 {
        let child = self.child
        let status = try await onThreadOfItsOwn { child.waitForExit(milliseconds: Int32(seconds * 1000)) }
        guard let status else {
            throw TestFailure(
                "\(child.pid) did not exit within \(seconds) s; stderr:\n" + stderr.suffix(20).joined(separator: "\n"))
        }
        for lines in [stdoutLines, stderrLines] {
            try await lines.changes.wait("end of output", seconds: seconds) { lines.isFinished }
        }
        return status
    }

    package func signal(_ number: Int32) { child.signal(number) }
}

/// Leftovers of test processes that died without cleaning up (killed, timed out, crashed): their temporary
/// folders and tmux sessions carry their pid and are removed by the next test process to start.
package enum TestSweep {
    private static let done: Void = {
        let alive = { (pid: Int32) in SystemProcess.exists(pid) }
        for name in FileSystem.listDirectory("/tmp") where name.hasPrefix(temporaryPrefix) {
            let rest = name.dropFirst(temporaryPrefix.count)
            guard let pid = rest.split(separator: "-").first.flatMap({ Int32($0) }), !alive(pid) else { continue }
            _ = try? SystemProcess.run(["rm", "-rf", "/tmp/\(name)"], timeoutMilliseconds: 10_000)
        }
        if FileSystem.findExecutable("tmux", path: SystemProcess.environmentValue("PATH")) != nil,
            let sessions = try? SystemProcess.run(
                ["tmux", "list-sessions", "-F", "#{session_name}"], timeoutMilliseconds: 5_000)
        {
            for session in sessions.text.split(separator: "\n") where session.hasPrefix(tmuxPrefix) {
                guard let pid = session.dropFirst(tmuxPrefix.count).split(separator: "-").first.flatMap({ Int32($0) }),
                    !alive(pid)
                else { continue }
                _ = try? SystemProcess.run(["tmux", "kill-session", "-t", String(session)], timeoutMilliseconds: 5_000)
            }
        }
    }()

    /// Temporary folders of a test process start with this, then its pid and a dash.
    package static let temporaryPrefix = "switchyard-test-"
    /// tmux sessions of a test process start with this, then its pid and a dash.
    package static let tmuxPrefix = "swy-test-"

    /// Runs the sweep once per test process.
    package static func once() { _ = done }

    /// A fresh folder under /tmp named for this test process (swept after it dies).
    package static func temporaryDirectory(mode: UInt32 = 0o700) throws -> String {
        once()
        let path = "/tmp/\(temporaryPrefix)\(SystemProcess.currentPID)-\(UInt64.random(in: 0...UInt64.max))"
        try FileSystem.makeDirectory(path, mode: mode)
        try FileSystem.setPermissions(path, mode)
        return path
    }

    /// A tmux session name tied to this test process.
    package static func tmuxSession(_ name: String) -> String {
        once()
        return "\(tmuxPrefix)\(SystemProcess.currentPID)-\(name)"
    }
}

/// Writes a manifest to a fresh temporary file and returns its path.
package func temporaryManifest(_ json: String) throws -> String {
    let directory = try TestSweep.temporaryDirectory()
    let path = directory + "/switchyard.json"
    try SpawnLock.withLock { try json.write(toFile: path, atomically: true, encoding: .utf8) }
    return path
}

/// What a CLI run left.
package struct CLIRun {
    package let status: Int32
    package let stdout: [String]
    package let stderr: [String]
    package var errorText: String { stderr.joined(separator: "\n") }
}

/// Runs `switchyard` (or `executable`) to completion (stdin closed) in `directory`, with extra environment variables.
package func runSwitchyard(
    _ arguments: [String], executable: String = product("switchyard"), in directory: String = packageRoot,
    environment: [String: String] = [:]
) async throws -> CLIRun {
    let process = try CLIProcess(
        arguments, executable: executable, environment: environment, currentDirectory: directory)
    process.closeStdin()
    let status = try await process.waitForExit()
    return CLIRun(status: status, stdout: process.stdout, stderr: process.stderr)
}

/// The tree a CLI command printed as its last JSON line (`switchyard tree --format json`, a script's last step).
package func lastTreeJSONLine(_ lines: [String]) throws -> TreeSnapshot {
    guard let line = lines.last(where: { $0.hasPrefix("{") }) else {
        throw TestFailure("no JSON line on stdout:\n\(lines.joined(separator: "\n"))")
    }
    return try JSONValueDecoder().decode(TreeSnapshot.self, from: JSONParser.parse(line))
}
