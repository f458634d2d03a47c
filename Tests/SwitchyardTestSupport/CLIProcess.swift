import Foundation
import Synchronization
import SwitchyardUV

/// A process started by a test (the `switchyard` CLI by default), with its stdout and stderr collected line by line.
///
/// Foundation's `Process` is fine here: it is the test that spawns the host, not the host spawning plugins.
package final class CLIProcess: Sendable {
    private let process: Process
    private let stdinPipe: Pipe = SpawnLock.withLock { Pipe() }
    private let stdoutLines = LineBuffer()
    private let stderrLines = LineBuffer()

    package init(
        _ arguments: [String], executable: String = product("switchyard"), environment: [String: String] = [:],
        currentDirectory: String = packageRoot
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["SWITCHYARD_PRODUCTS_DIR"] = productsDirectory
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory)
        // Foundation's pipes are inheritable: create them and fork under the spawn lock, so a concurrent host spawn
        // never forks while they are still unswept.
        let input = stdinPipe
        let (stdout, stderr) = try SpawnLock.withLock {
            let stdout = Pipe()
            let stderr = Pipe()
            process.standardOutput = stdout
            process.standardError = stderr
            process.standardInput = input
            try process.run()
            return (stdout, stderr)
        }
        self.process = process
        collect(stdout.fileHandleForReading, into: stdoutLines)
        collect(stderr.fileHandleForReading, into: stderrLines)
    }

    private func collect(_ handle: FileHandle, into lines: LineBuffer) {
        let thread = Thread {
            var partial = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                partial.append(chunk)
                while let newline = partial.firstIndex(of: 0x0A) {
                    let line = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
                    lines.append(line)
                    partial.removeSubrange(partial.startIndex...newline)
                }
            }
            if !partial.isEmpty { lines.append(String(decoding: partial, as: UTF8.self)) }
            lines.finish()
        }
        thread.start()
    }

    package var pid: Int32 { process.processIdentifier }
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
        stdinPipe.fileHandleForWriting.write(Data(text.utf8))
    }

    package func closeStdin() {
        try? stdinPipe.fileHandleForWriting.close()
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
            throw TestFailure("no stdout line \(index + 1) within \(seconds) s; stderr:\n" + stderr.joined(separator: "\n"))
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
            throw TestFailure("no \(stream) line containing '\(text)' within \(seconds) s; \(stream) was:\n" + lines.withLock { $0.joined(separator: "\n") })
        }
        return line
    }

    /// Waits for the process to exit and returns its status.
    package func waitForExit(seconds: Double = defaultTimeout) async throws -> Int32 {
        let pid = process.processIdentifier
        let exited = await Task.detached { SystemProcess.waitForExit(pid, milliseconds: Int32(seconds * 1000)) }.value
        guard exited else { throw TestFailure("switchyard did not exit within \(seconds) s") }
        process.waitUntilExit()
        for lines in [stdoutLines, stderrLines] {
            try await lines.changes.wait("end of output", seconds: seconds) { lines.isFinished }
        }
        return process.terminationStatus
    }

    package func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// Writes a manifest to a fresh temporary file and returns its path.
package func temporaryManifest(_ json: String) throws -> String {
    let directory = NSTemporaryDirectory() + "switchyard-test-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/switchyard.json"
    try SpawnLock.withLock { try json.write(toFile: path, atomically: true, encoding: .utf8) }
    return path
}
