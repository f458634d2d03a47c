import CSwitchyardSystem
import Glibc
import Synchronization

/// A helper process with piped stdin, stdout and stderr, started through the same path as every other child of
/// this process: `posix_spawn` under ``SpawnLock`` after the close-on-exec sweep (so it inherits exactly 0, 1 and
/// 2 and nothing another thread was creating), with a clean signal mask; and reaped by its pid.
///
/// Foundation's `Process` is not used for this on purpose: on Linux it learns that a child exited when a socket
/// the child inherited is closed, so a plugin forked by another thread at the wrong moment inherits that socket
/// and the exit is never seen (a zombie and a wait without end). Here the exit is a pidfd event and the status
/// comes from `waitpid` on the pid, and every wait has a bound.
public final class ChildProcess: Sendable {
    /// The child's pid.
    public let pid: Int32
    private let stdinFD: Mutex<Int32>
    private let status = Mutex<Int32?>(nil)

    /// What a reader thread does with one of the child's output streams.
    public enum Output: Sendable {
        /// Each line (without its newline, decoded as UTF-8 with replacement), then `nil` at end of stream.
        case lines(@Sendable (String?) -> Void)
        /// The bytes of each read as they come (no framing), then `nil` at end of stream: for a caller that frames
        /// and validates the stream itself, bounded (``LineFramer``-style) and byte-exact.
        case bytes(@Sendable ([UInt8]?) -> Void)
    }

    /// Starts `arguments[0]` (looked up in `PATH` when it has no slash).
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment.
    ///   - directory: its working directory (`nil`: this process's).
    ///   - onStdout, onStderr: called on a reader thread of their own with each line (without its newline), then
    ///     once with `nil` at end of stream.
    public convenience init(
        _ arguments: [String], environment: [String: String], directory: String? = nil,
        onStdout: @escaping @Sendable (String?) -> Void, onStderr: @escaping @Sendable (String?) -> Void
    ) throws(SystemError) {
        try self.init(
            arguments, environment: environment, directory: directory, stdout: .lines(onStdout),
            stderr: .lines(onStderr))
    }

    /// Starts `arguments[0]` (looked up in `PATH` when it has no slash).
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment.
    ///   - directory: its working directory (`nil`: this process's).
    ///   - newSession: start it in a session and process group of its own (as the host starts plugins), so
    ///     ``signalGroup(_:)`` reaches whatever it started too.
    ///   - stdout, stderr: what a reader thread of their own does with each stream.
    public init(
        _ arguments: [String], environment: [String: String], directory: String? = nil, newSession: Bool = false,
        stdout: Output, stderr: Output
    ) throws(SystemError) {
        guard let program = arguments.first else { throw SystemError(errno: EINVAL, operation: "spawn: no program") }
        SystemProcess.ignoreBrokenPipes()
        // pipe2 with O_CLOEXEC: no thread's fork sees these descriptors as inheritable, not even for an instant.
        var opened: [Int32] = []
        func pipe() throws(SystemError) -> (read: Int32, write: Int32) {
            let ends = try Descriptor.pipe()
            opened += [ends.read, ends.write]
            return ends
        }
        let input, output, errors: (read: Int32, write: Int32)
        do throws(SystemError) {
            input = try pipe()
            output = try pipe()
            errors = try pipe()
        } catch {
            for fd in opened { Glibc.close(fd) }
            throw error
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        if let directory { _ = posix_spawn_file_actions_addchdir_np(&actions, directory) }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = SystemProcess.spawnWithCleanSignals(&child, program, &actions, argv, envp, newSession: newSession)
        Glibc.close(input.read)
        Glibc.close(output.write)
        Glibc.close(errors.write)
        if spawned != 0 {
            for fd in [input.write, output.read, errors.read] { Glibc.close(fd) }
            throw SystemError(errno: spawned, operation: "posix_spawn \(program)")
        }
        pid = child
        stdinFD = Mutex(input.write)
        do {
            try Self.read(output.read, stdout)
            try Self.read(errors.read, stderr)
        } catch {
            Glibc.kill(child, SIGKILL)
            throw error
        }
    }

    deinit {
        let fd = stdinFD.withLock { $0 }
        if fd >= 0 { Glibc.close(fd) }
        // Never leave a child behind, nor a zombie.
        if status.withLock({ $0 }) == nil {
            Glibc.kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = retryingEINTR { waitpid(pid, &raw, 0) }
        }
    }

    private static func read(_ fd: Int32, _ output: Output) throws(SystemError) {
        switch output {
        case .lines(let deliver): try readLines(fd, deliver)
        case .bytes(let deliver):
            _ = try SystemThread.spawn {
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    let count = retryingEINTR {
                        buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                    }
                    if count <= 0 { break }
                    deliver(Array(buffer[0..<count]))
                }
                Glibc.close(fd)
                deliver(nil)
            }
        }
    }

    private static func readLines(_ fd: Int32, _ deliver: @escaping @Sendable (String?) -> Void) throws(SystemError) {
        _ = try SystemThread.spawn {
            var partial: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = retryingEINTR { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
                if count <= 0 { break }
                var start = 0
                for index in 0..<count where buffer[index] == 0x0A {
                    partial += buffer[start..<index]
                    deliver(String(decoding: partial, as: UTF8.self))
                    partial.removeAll(keepingCapacity: true)
                    start = index + 1
                }
                partial += buffer[start..<count]
            }
            if !partial.isEmpty { deliver(String(decoding: partial, as: UTF8.self)) }
            Glibc.close(fd)
            deliver(nil)
        }
    }

    /// Writes all of `bytes` to the child's stdin; false once it is closed or the child stopped reading.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        stdinFD.withLock { fd in
            guard fd >= 0 else { return false }
            return writeFully(bytes) { Glibc.write(fd, $0, $1) } == 0
        }
    }

    /// Closes the child's stdin (it reads EOF).
    public func closeStdin() {
        stdinFD.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    /// Sends `signal` to the child (not once it has been reaped: its pid may belong to someone else by then).
    public func signal(_ number: Int32) {
        status.withLock { status in
            if status == nil { _ = Glibc.kill(pid, number) }
        }
    }

    /// Sends `signal` to the child's process group (started with `newSession`), so its own children get it too;
    /// not once the child has been reaped, for the same reason as ``signal(_:)``.
    public func signalGroup(_ number: Int32) {
        status.withLock { status in
            if status == nil { _ = Glibc.kill(-pid, number) }
        }
    }

    /// Whether the child has been reaped.
    public var hasExited: Bool { status.withLock { $0 } != nil }

    /// Waits up to `milliseconds` for the child to exit (a pidfd event, not a poll loop) and reaps it.
    ///
    /// - Returns: its exit status (128 + signal when killed), or nil if it is still running at the deadline.
    public func waitForExit(milliseconds: Int32) -> Int32? {
        if let known = status.withLock({ $0 }) { return known }
        _ = SystemProcess.waitForExit(pid, milliseconds: milliseconds)
        return status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let reaped = retryingEINTR { waitpid(pid, &raw, WNOHANG) }
            guard reaped == pid else { return nil }
            let signal = raw & 0x7f
            let code = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            status = code
            return code
        }
    }
}
