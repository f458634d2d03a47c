import CSwitchyardSystem
import Glibc

// Short-lived helper programs for tests and tools: posix_spawn with a clean signal state, outside any loop.
extension SystemProcess {
    /// A short-lived helper's outcome: its exit status (128 + signal when killed) and its stdout and stderr.
    public struct Completed: Sendable {
        public let status: Int32
        public let output: [UInt8]
        public var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// posix_spawnp with an empty signal mask and default dispositions in the child. The caller may be a dispatch
    /// or Swift-concurrency worker thread, which blocks most signals, and a child inherits that mask: a libuv child
    /// (the C benchmark host) then never sees SIGCHLD and waits forever. SIGPIPE, ignored in this process, is reset too.
    static func spawnWithCleanSignals(
        _ pid: inout pid_t, _ program: String, _ actions: inout posix_spawn_file_actions_t,
        _ argv: [UnsafeMutablePointer<CChar>?], _ envp: [UnsafeMutablePointer<CChar>?]? = nil, newSession: Bool = false
    ) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        let session = newSession ? Int32(switchyard_posix_spawn_setsid()) : 0
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | session))
        return SpawnLock.withLock {
            markAllDescriptorsCloseOnExec()
            guard let envp else { return posix_spawnp(&pid, program, &actions, &attributes, argv, environ) }
            // posix_spawnp looks the program up in the *caller's* PATH, which is what a test means.
            return posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        }
    }

    /// Runs a helper program (looked up in `PATH`) to completion with stdin from /dev/null, collecting stdout and
    /// stderr together. Used by tests and tools for programs that daemonize (tmux): unlike Foundation's `Process`,
    /// it waits for the child's exit (a pidfd event), not for every inherited descriptor to close.
    public static func run(_ arguments: [String], timeoutMilliseconds: Int32 = 30_000) throws(SystemError) -> Completed
    {
        guard let program = arguments.first else { throw SystemError(errno: EINVAL, operation: "run: no program") }
        // Close-on-exec from birth (dup2 clears it on the child's 1 and 2), so no other thread's fork inherits them.
        let (readEnd, writeEnd) = try Descriptor.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = spawnWithCleanSignals(&pid, program, &actions, argv)
        Glibc.close(writeEnd)
        defer { Glibc.close(readEnd) }
        if spawned != 0 { throw SystemError(errno: spawned, operation: "posix_spawn \(program)") }

        // Kept for the whole wait: the pidfd's readiness is the child's exit (-1, ignored by poll, without pidfds).
        let child = ProcessDescriptor(pid)
        let pidFD = child?.fd ?? -1
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var pipeOpen = true
        var exited = false
        var waitStatus: Int32 = 0
        let deadline = MonotonicClock.milliseconds + Int64(timeoutMilliseconds)
        func drain() {
            while pipeOpen {
                let count = retryingEINTR {
                    buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                }
                if count > 0 {
                    output += buffer[0..<count]
                } else if count < 0 && errno == EAGAIN {
                    return
                } else {
                    pipeOpen = false
                }
            }
        }
        // Non-blocking reads after the exit: a daemonized grandchild may keep the write end open forever.
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        while !exited {
            let remaining = deadline - MonotonicClock.milliseconds
            if remaining <= 0 {
                Glibc.kill(pid, SIGKILL)
                _ = waitpid(pid, &waitStatus, 0)
                throw SystemError(errno: ETIMEDOUT, operation: "run \(program)")
            }
            var descriptors = [pollfd(fd: pidFD, events: Int16(POLLIN), revents: 0)]
            if pipeOpen { descriptors.append(pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)) }
            let timeout = pidFD >= 0 ? Int32(min(remaining, Int64(Int32.max))) : Int32(min(remaining, 10))
            _ = poll(&descriptors, nfds_t(descriptors.count), timeout)
            drain()
            let reaped = waitpid(pid, &waitStatus, WNOHANG)
            // ECHILD: someone else (a libuv loop's SIGCHLD handler in this process) reaped it first.
            if reaped == pid || (reaped < 0 && errno == ECHILD) { exited = true }
        }
        drain()
        let signal = waitStatus & 0x7f
        return Completed(status: signal == 0 ? (waitStatus >> 8) & 0xff : 128 + signal, output: output)
    }

    /// Starts a long-running helper (looked up in `PATH`) without waiting for it: stdin from /dev/null, stdout and
    /// stderr to `logPath` (or /dev/null). Returns its pid; ``reap(_:)`` collects it after it exits. For tools that
    /// drive a separate `switchyard run` process (the benchmark).
    public static func launch(_ arguments: [String], logPath: String? = nil) throws(SystemError) -> Int32 {
        guard let program = arguments.first else { throw SystemError(errno: EINVAL, operation: "launch: no program") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = spawnWithCleanSignals(&pid, program, &actions, argv)
        if status != 0 { throw SystemError(errno: status, operation: "posix_spawn \(program)") }
        return pid
    }

    /// Collects an exited child started with ``launch(_:logPath:)`` (blocking); its exit status, 128 + signal if killed.
    @discardableResult
    public static func reap(_ pid: Int32) -> Int32 {
        var status: Int32 = 0
        _ = retryingEINTR { waitpid(pid, &status, 0) }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
