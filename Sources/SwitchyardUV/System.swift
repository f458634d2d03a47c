import CLibUV
import Glibc
import Synchronization

// Every syscall that needs a pointer lives in this module, so the rest of Switchyard builds with strict memory
// safety. The helpers are small and pointer-free at their boundary.

/// Serialises "mark descriptors close-on-exec, then fork" against code that creates inheritable descriptors.
///
/// The sweep before each spawn is airtight only if no other thread opens an inheritable descriptor between the
/// sweep and the fork. The host itself never does; code in the same process that might (a test creating
/// Foundation `Pipe`s, an embedding app) wraps that in ``withLock(_:)``, and the next spawn sweeps what it left.
public enum SpawnLock {
    private static let mutex = Mutex(())

    public static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try mutex.withLock { _ in try body() }
    }
}

/// Marks every descriptor above 2 close-on-exec, so a spawned child inherits exactly 0, 1 and 2.
///
/// Other threads (tests, Foundation.Process elsewhere in a process) may open inheritable descriptors at any time;
/// sweeping right before each fork keeps them out of plugins.
func markAllDescriptorsCloseOnExec() {
    if switchyard_cloexec_from(3) == 0 { return }
    // Kernels before 5.11 have no CLOSE_RANGE_CLOEXEC: walk /proc/self/fd instead.
    guard let directory = opendir("/proc/self/fd") else { return }
    defer { closedir(directory) }
    let own = dirfd(directory)
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard let fd = Int32(name), fd > 2, fd != own else { continue }
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }
}

/// Process-level facts and actions that take no handle.
public enum SystemProcess {
    public static var currentPID: Int32 { getpid() }
    public static var userID: UInt32 { getuid() }

    /// Sends a signal to a pid (or a process group when `pid` is negative). Returns false if it failed.
    @discardableResult
    public static func kill(_ pid: Int32, _ signal: Int32) -> Bool { Glibc.kill(pid, signal) == 0 }

    /// Whether a process with this pid exists (it may be a zombie).
    public static func exists(_ pid: Int32) -> Bool {
        Glibc.kill(pid, 0) == 0 || errno == EPERM
    }

    /// Whether `pid` exists and is not a zombie, read from `/proc/PID/stat`.
    public static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? FileSystem.readFile("/proc/\(pid)/stat") else { return false }
        // The state letter follows the ")" that closes the command name.
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 < stat.count else { return false }
        let state = stat[close + 2]
        return state != UInt8(ascii: "Z") && state != UInt8(ascii: "X")
    }

    /// Waits until `pid` has exited (pidfd + poll: an event, not a sleep), for at most `milliseconds`.
    /// - Returns: true if the process is gone (or never existed), false on timeout.
    public static func waitForExit(_ pid: Int32, milliseconds: Int32) -> Bool {
        let fd = switchyard_pidfd_open(pid)
        if fd < 0 { return !exists(pid) }
        defer { Glibc.close(fd) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        return ready > 0
    }

    /// Whether `pid` is gone, a zombie, or already exiting (`PF_EXITING` in `/proc/PID/stat`'s flags). A PID
    /// namespace's init that has died stays "running" in its state letter until every process in the namespace is
    /// reaped; this sees it as gone at once.
    public static func isExiting(_ pid: Int32) -> Bool {
        guard let stat = try? FileSystem.readFile("/proc/\(pid)/stat"),
            let close = stat.lastIndex(of: UInt8(ascii: ")"))
        else { return true }
        // Fields after the command: state, ppid, pgrp, session, tty_nr, tpgid, flags, ...
        let fields = String(decoding: stat[(close + 2)...], as: UTF8.self).split(separator: " ")
        guard fields.count > 6, let flags = UInt64(fields[6]) else { return true }
        return fields[0] == "Z" || fields[0] == "X" || flags & 0x4 != 0
    }

    /// SIGKILLs and reaps every child of this process that was not spawned through ``UVProcess`` (orphaned
    /// descendants reparented to it as a subreaper, see ``ProcessContainment/becomeSubreaper()``).
    /// - Returns: how many there were.
    @discardableResult
    public static func endAdoptedOrphans() -> Int {
        let spawned = UVProcess.spawned.withLock { $0 }
        let adopted = childPIDs(of: getpid()).filter { !spawned.contains($0) }
        for pid in adopted { Glibc.kill(pid, SIGKILL) }
        for pid in adopted {
            // SIGKILL cannot be ignored: each exits promptly, and waitpid on its own pid takes no one else's status.
            _ = waitForExit(pid, milliseconds: 1_000)
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
        }
        return adopted.count
    }

    /// The descriptors a process has open, from `/proc/PID/fd`.
    public static func openDescriptors(of pid: Int32) -> [Int32] {
        guard let directory = opendir("/proc/\(pid)/fd") else { return [] }
        defer { closedir(directory) }
        var result: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let fd = Int32(name) { result.append(fd) }
        }
        return result.sorted()
    }

    /// The pids whose parent is `pid`, from `/proc/*/stat`.
    public static func childPIDs(of pid: Int32) -> [Int32] {
        var result: [Int32] = []
        for name in FileSystem.listDirectory("/proc") {
            guard let child = Int32(name), let stat = try? FileSystem.readFile("/proc/\(child)/stat"),
                let close = stat.lastIndex(of: UInt8(ascii: ")"))
            else { continue }
            // Fields after the command: state, ppid, ...
            let fields = String(decoding: stat[(close + 2)...], as: UTF8.self).split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == pid { result.append(child) }
        }
        return result.sorted()
    }

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
        _ argv: [UnsafeMutablePointer<CChar>?], _ envp: [UnsafeMutablePointer<CChar>?]? = nil
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
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
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
    public static func run(_ arguments: [String], timeoutMilliseconds: Int32 = 30_000) throws(UVError) -> Completed {
        guard let program = arguments.first else { throw UVError(code: UV_EINVAL.rawValue, operation: "run: no program") }
        var pipeFDs: [Int32] = [0, 0]
        // Close-on-exec from birth (dup2 clears it on the child's 1 and 2), so no other thread's fork inherits them.
        guard switchyard_pipe_cloexec(&pipeFDs) == 0 else { throw UVError(errno: errno, operation: "pipe2") }
        let (readEnd, writeEnd) = (pipeFDs[0], pipeFDs[1])
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
        if spawned != 0 { throw UVError(errno: spawned, operation: "posix_spawn \(program)") }

        let pidFD = switchyard_pidfd_open(pid)
        defer { if pidFD >= 0 { Glibc.close(pidFD) } }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var pipeOpen = true
        var exited = false
        var waitStatus: Int32 = 0
        func monotonicMilliseconds() -> Int64 { Int64(uv_hrtime() / 1_000_000) }
        let deadline = monotonicMilliseconds() + Int64(timeoutMilliseconds)
        func drain() {
            while pipeOpen {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                if count > 0 {
                    output += buffer[0..<count]
                } else if count < 0 && errno == EINTR {
                    continue
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
            let remaining = deadline - monotonicMilliseconds()
            if remaining <= 0 {
                Glibc.kill(pid, SIGKILL)
                _ = waitpid(pid, &waitStatus, 0)
                throw UVError(code: UV_ETIMEDOUT.rawValue, operation: "run \(program)")
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
    public static func launch(_ arguments: [String], logPath: String? = nil) throws(UVError) -> Int32 {
        guard let program = arguments.first else { throw UVError(code: UV_EINVAL.rawValue, operation: "launch: no program") }
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
        if status != 0 { throw UVError(errno: status, operation: "posix_spawn \(program)") }
        return pid
    }

    /// Collects an exited child started with ``launch(_:logPath:)`` (blocking); its exit status, 128 + signal if killed.
    @discardableResult
    public static func reap(_ pid: Int32) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Ends this process when process `pid` ends: SIGTERM to itself (a host shuts down cleanly), then SIGKILL 5 s
    /// later. For processes started by a test harness, which may be killed without a chance to clean up: unlike
    /// `PR_SET_PDEATHSIG` this watches the parent *process* (a pidfd), not the thread that happened to fork it.
    ///
    /// Does nothing (and returns false) if `pid` is not this process's parent, e.g. it already died.
    @discardableResult
    public static func terminateWhenProcessExits(_ pid: Int32) -> Bool {
        let fd = switchyard_pidfd_open(pid)
        guard fd >= 0 else { return false }
        // The pidfd pins the process: if it is still our parent now, the event below is its exit, not a reuse.
        guard getppid() == pid else {
            Glibc.close(fd)
            Glibc.kill(getpid(), SIGTERM)
            return false
        }
        let thread = try? UVThread.spawn {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while poll(&descriptor, 1, -1) < 0 && errno == EINTR {}
            Glibc.kill(getpid(), SIGTERM)
            usleep(5_000_000)
            Glibc.kill(getpid(), SIGKILL)
        }
        return thread != nil
    }

    /// This process's resident set size in bytes (`/proc/self/statm`).
    public static func residentBytes(of pid: Int32? = nil) -> Int {
        let path = pid.map { "/proc/\($0)/statm" } ?? "/proc/self/statm"
        guard let text = try? FileSystem.readFile(path) else { return 0 }
        let fields = String(decoding: text, as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Returns free heap memory to the kernel. After a burst (a plugin that stalled with requests queued, a
    /// flood), glibc would otherwise keep the high-water mark resident for the life of the host.
    public static func returnFreeMemory() { _ = switchyard_trim_heap() }

    /// Peak resident set size of this process in bytes.
    public static var peakResidentBytes: Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    /// The running executable's absolute path (`uv_exepath`).
    public static var executablePath: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        var size = buffer.count
        guard uv_exepath(&buffer, &size) == 0 else { return nil }
        return String(decoding: buffer.prefix(size).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The host's environment as a dictionary.
    public static var environment: [String: String] {
        var result: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            cursor += 1
        }
        return result
    }

    public static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The number of CPUs this process may run on.
    public static var availableCPUs: Int { Int(uv_available_parallelism()) }

    /// Pins this process (every thread it has, and so every thread and child it makes) to one CPU
    /// (`sched_setaffinity`), for benchmarks. Returns false on error.
    @discardableResult
    public static func pinToCPU(_ cpu: Int32) -> Bool { switchyard_pin_cpu(cpu) == 0 }
}

/// Synchronous file operations the host needs outside the loop's I/O path (manifest, state file).
public enum FileSystem {
    /// Reads a whole regular file of at most `maxBytes` (see ``readRegularFile(_:maxBytes:)``, whose typed error
    /// says what was wrong; this variant folds it into a ``UVError`` for callers that only report it).
    public static func readFile(_ path: String, maxBytes: Int = defaultReadLimit) throws(UVError) -> [UInt8] {
        do { return try readRegularFile(path, maxBytes: maxBytes) } catch {
            switch error.problem {
            case .system(let cause): throw UVError(code: cause.code, operation: "\(cause.operation) \(path)")
            case .notRegular: throw UVError(code: UV_EINVAL.rawValue, operation: error.description)
            case .tooLarge: throw UVError(code: UV_EFBIG.rawValue, operation: error.description)
            }
        }
    }

    /// Replaces `path` atomically: write a temporary file beside it, fsync it, rename it over `path`, fsync the
    /// directory. A crash at any point leaves either the old or the new content, never a torn file.
    public static func writeFileAtomically(_ path: String, _ bytes: [UInt8], mode: UInt32 = 0o600) throws(UVError) {
        let temporary = "\(path).tmp-\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        if fd < 0 { throw UVError(errno: errno, operation: "open \(temporary)") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let error = UVError(errno: errno, operation: "write \(temporary)")
                Glibc.close(fd)
                unlink(temporary)
                throw error
            }
            offset += written
        }
        if fsync(fd) != 0 {
            let error = UVError(errno: errno, operation: "fsync \(temporary)")
            Glibc.close(fd)
            unlink(temporary)
            throw error
        }
        Glibc.close(fd)
        if Glibc.rename(temporary, path) != 0 {
            let error = UVError(errno: errno, operation: "rename \(temporary)")
            unlink(temporary)
            throw error
        }
        let directory = parentDirectory(of: path)
        let directoryFD = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            Glibc.close(directoryFD)
        }
    }

    private static let temporaryCounter = Atomic<Int>(0)

    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
    public static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// File permission bits (e.g. `0o600`), or nil if the path does not exist.
    public static func permissions(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    public static func setPermissions(_ path: String, _ mode: UInt32) throws(UVError) {
        if chmod(path, mode) != 0 { throw UVError(errno: errno, operation: "chmod \(path)") }
    }

    /// Creates a directory (and missing parents) with `mode`.
    public static func makeDirectory(_ path: String, mode: UInt32 = 0o700) throws(UVError) {
        if isDirectory(path) { return }
        let parent = parentDirectory(of: path)
        if parent != path && !parent.isEmpty && parent != "." && !isDirectory(parent) {
            try makeDirectory(parent, mode: mode)
        }
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw UVError(errno: errno, operation: "mkdir \(path)")
        }
    }

    @discardableResult
    public static func remove(_ path: String) -> Bool { unlink(path) == 0 }
    /// Writes `text` to an existing file in one `write` (no create, no rename): for kernel control files such as
    /// `cgroup.procs`, where each write is one command.
    public static func writeExisting(_ path: String, _ text: String) throws(UVError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UVError(errno: errno, operation: "open \(path)") }
        defer { Glibc.close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw UVError(errno: errno, operation: "write \(path)") }
    }

    /// Removes an empty directory. Returns false if it failed.
    @discardableResult
    public static func removeDirectory(_ path: String) -> Bool { rmdir(path) == 0 }


    /// Seconds since the epoch (wall clock, for file names and reports).
    public static var secondsSinceEpoch: Int { Int(Glibc.time(nil)) }

    /// The names in a directory (not `.` and `..`), sorted; empty if it cannot be read.
    public static func listDirectory(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public static func move(_ source: String, to destination: String) throws(UVError) {
        if Glibc.rename(source, destination) != 0 { throw UVError(errno: errno, operation: "rename \(source)") }
    }

    public static var currentDirectory: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The canonical absolute path (`realpath`), or nil if it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Looks `name` up in a `PATH` value, like `execvp` would.
    public static func findExecutable(_ name: String, path: String?) -> String? {
        if name.contains("/") { return isExecutable(name) ? name : nil }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if isExecutable(candidate) { return candidate }
        }
        return nil
    }
}

/// Unbuffered writes to stderr, safe from any thread (C's `stderr` global is not concurrency-safe in Swift 6).
public enum StandardError {
    public static func write(_ text: String) { writeAll(2, text) }
}

/// Unbuffered writes to stdout (a prompt without a newline must appear at once).
public enum StandardOutput {
    public static func write(_ text: String) { writeAll(1, text) }
}

private func writeAll(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}

/// Calls `bind` or `connect` on `fd` with `path` as a `sockaddr_un`. Returns the call's status; a path too long for
/// `sun_path` fails with `ENAMETOOLONG` in `errno`, like the kernel would, instead of being cut.
func unixAddressCall(
    _ fd: Int32, _ path: String, _ name: String,
    _ call: (Int32, UnsafePointer<sockaddr>?, socklen_t) -> Int32
) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        errno = ENAMETOOLONG
        return -1
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in bytes.enumerated() { raw[index] = byte }
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// A blocking Unix-domain stream socket client (for the CLI's control commands and for probing stale sockets).
public final class UnixSocket {
    private var fd: Int32

    /// Connects to a listening socket at `path`.
    ///
    /// With `requireSameUser` (the default) the server's credentials (`SO_PEERCRED`) must be this process's
    /// effective uid, whoever that is (root included): a socket another user put at a path this client trusts is an
    /// impostor, and the request (and its answer) must not go to it. The refusal is `EPERM`, naming both uids.
    public init(connectingTo path: String, requireSameUser: Bool = true) throws(UVError) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw UVError(errno: errno, operation: "socket") }
        if unixAddressCall(fd, path, "connect", Glibc.connect) != 0 {
            let error = UVError(errno: errno, operation: "connect \(path)")
            Glibc.close(fd)
            throw error
        }
        guard requireSameUser else { return }
        var uid: UInt32 = 0
        var pid: Int32 = 0
        if switchyard_peer_uid(fd, &uid, &pid) != 0 {
            let error = UVError(errno: errno, operation: "getsockopt(SO_PEERCRED) \(path)")
            Glibc.close(fd)
            throw error
        }
        if uid != geteuid() {
            Glibc.close(fd)
            throw UVError(
                code: UV_EPERM.rawValue,
                operation: "connect \(path): the server there runs as \(FileSystem.describeOwner(uid)) (pid \(pid)), not as this user (\(FileSystem.describeOwner(geteuid()))); refusing to talk to it")
        }
    }

    deinit { close() }

    /// Whether something accepts connections at `path` (a stale socket file does not), whoever runs it.
    public static func isListening(_ path: String) -> Bool {
        (try? UnixSocket(connectingTo: path, requireSameUser: false)) != nil
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws(UVError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw UVError(errno: errno, operation: "send")
            }
            offset += written
        }
    }

    /// Reads what is available (blocking until something is); empty at end of stream.
    public func read(timeoutMilliseconds: Int32 = -1) throws(UVError) -> [UInt8] {
        if timeoutMilliseconds >= 0 {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready == 0 { throw UVError(code: UV_ETIMEDOUT.rawValue, operation: "read") }
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                throw UVError(errno: errno, operation: "recv")
            }
            return Array(buffer[0..<count])
        }
    }

    /// Half-closes the write side (the peer reads EOF).
    public func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}

/// A terminal in raw mode, for the interactive prompt's line editing (arrow keys, history).
public final class Terminal {
    private let fd: Int32
    private var original = termios()
    private var raw = false
    /// The settings to restore if the process ends while a terminal is raw.
    private static let saved = Mutex<termios?>(nil)

    /// Restores a terminal left in raw mode (call before exiting from anywhere).
    public static func restoreAll() {
        guard var settings = saved.withLock({ $0 }) else { return }
        _ = tcsetattr(0, TCSANOW, &settings)
    }

    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Puts `fd` in raw mode (no echo, byte at a time); nil if it is not a terminal.
    public init?(fd: Int32 = 0) {
        self.fd = fd
        guard isatty(fd) == 1, tcgetattr(fd, &original) == 0 else { return nil }
        Self.saved.withLock { $0 = original }
        var settings = original
        // No ISIG: Ctrl-C reaches the editor as a byte (it ends the prompt), so the terminal is always restored.
        settings.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        settings.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &settings.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else { return nil }
        raw = true
    }

    deinit { restore() }

    /// Back to the settings the terminal had.
    public func restore() {
        guard raw else { return }
        raw = false
        _ = tcsetattr(fd, TCSANOW, &original)
    }

    /// One byte of input, or nil at end of input.
    public func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count == 1 { return byte }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }
}
