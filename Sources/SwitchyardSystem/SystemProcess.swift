import CSwitchyardSystem
import Glibc
package import Synchronization

// Every syscall Switchyard makes outside libuv's loop lives in this module, so the rest of Switchyard builds with
// strict memory safety. The helpers are small and pointer-free at their boundary.

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
package func markAllDescriptorsCloseOnExec() {
    if switchyard_close_range_cloexec(3) == 0 { return }
    // Kernels before 5.11 have no CLOSE_RANGE_CLOEXEC: walk /proc/self/fd instead.
    // The listing's own descriptor is closed by the time the loop runs; fcntl then fails on it, harmlessly.
    for name in FileSystem.listDirectory("/proc/self/fd") {
        guard let fd = Int32(name), fd > 2 else { continue }
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

    /// Waits until `pid` has exited (pidfd + poll: an event, not a sleep), for at most `milliseconds`.
    /// - Returns: true if the process is gone (or never existed), false on timeout.
    public static func waitForExit(_ pid: Int32, milliseconds: Int32) -> Bool {
        guard let process = ProcessDescriptor(pid) else { return !exists(pid) }
        return process.waitForExit(milliseconds: milliseconds)
    }

    /// Whether `pid` is gone, a zombie, or already exiting (`PF_EXITING` in `/proc/PID/stat`'s flags). A PID
    /// namespace's init that has died stays "running" in its state letter until every process in the namespace is
    /// reaped; this sees it as gone at once.
    public static func isExiting(_ pid: Int32) -> Bool {
        guard let fields = statFields(of: pid), fields.count > 6, let flags = UInt64(fields[6]) else { return true }
        return fields[0] == "Z" || fields[0] == "X" || flags & 0x4 != 0
    }

    /// The fields of `/proc/PID/stat` after the command name (state, ppid, pgrp, session, tty_nr, tpgid, flags, …),
    /// or nil if there is no such process. They start after the *last* ")", since a command may contain one.
    public static func statFields(of pid: Int32) -> [Substring]? {
        guard let stat = try? FileSystem.readFile("/proc/\(pid)/stat"),
            let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 <= stat.count
        else { return nil }
        return String(decoding: stat[(close + 2)...], as: UTF8.self).split(separator: " ")
    }

    /// Every child a loop spawned in this process and not yet reaped (the libuv wrapper's `UVProcess` records
    /// them): the children not in here were adopted (see ``endAdoptedOrphans()``).
    package static let spawnedByLoop = Mutex<Set<Int32>>([])

    /// SIGKILLs and reaps every child of this process that a loop did not spawn (orphaned descendants reparented to
    /// it as a subreaper, see ``ProcessContainment/becomeSubreaper()``).
    /// - Returns: how many there were.
    @discardableResult
    public static func endAdoptedOrphans() -> Int {
        let spawned = spawnedByLoop.withLock { $0 }
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

    /// Ends this process when process `pid` ends: SIGTERM to itself (a host shuts down cleanly), then SIGKILL 5 s
    /// later. For processes started by a test harness, which may be killed without a chance to clean up: unlike
    /// `PR_SET_PDEATHSIG` this watches the parent *process* (a pidfd), not the thread that happened to fork it.
    ///
    /// Does nothing (and returns false) if `pid` is not this process's parent, e.g. it already died.
    @discardableResult
    public static func terminateWhenProcessExits(_ pid: Int32) -> Bool {
        guard let parent = ProcessDescriptor(pid) else { return false }
        // The pidfd pins the process: if it is still our parent now, the event below is its exit, not a reuse.
        guard getppid() == pid else {
            Glibc.kill(getpid(), SIGTERM)
            return false
        }
        let thread = try? SystemThread.spawn {
            _ = parent.waitForExit(milliseconds: -1)
            Glibc.kill(getpid(), SIGTERM)
            usleep(5_000_000)
            Glibc.kill(getpid(), SIGKILL)
        }
        return thread != nil
    }

    /// Makes a write to a child that just exited fail with EPIPE instead of killing this process (libuv does not use
    /// MSG_NOSIGNAL for pipes; sourcekit-lsp's DisableSigpipe does the same). Once per process; idempotent.
    public static func ignoreBrokenPipes() { _ = brokenPipesIgnored }

    private static let brokenPipesIgnored: Void = {
        signal(SIGPIPE, SIG_IGN)
        // A file-size limit (RLIMIT_FSIZE) then fails the write with EFBIG, which the state file reports, instead
        // of killing the host (the default action of SIGXFSZ). libuv resets both in the children it spawns.
        signal(SIGXFSZ, SIG_IGN)
    }()

    /// Returns free heap memory to the kernel. After a burst (a plugin that stalled with requests queued, a
    /// flood), glibc would otherwise keep the high-water mark resident for the life of the host.
    public static func returnFreeMemory() { _ = switchyard_trim_heap() }

    /// Keeps large blocks out of the heap for the life of the process, so what a host frees goes back to the kernel.
    ///
    /// glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB) and its trim threshold
    /// to twice that: after one multi-megabyte snapshot, every later one is carved from the heap, and the heap's
    /// free top (megabytes, after a big tree was built) stays resident: ``returnFreeMemory()`` trims the top of the
    /// main arena only, and a host allocates in its loop thread's arena. Setting both thresholds (to glibc's own
    /// defaults) turns that growth off. For a host process only: it applies to the whole process.
    public static func keepLargeBlocksOutOfHeap() { switchyard_fix_heap_thresholds(128 << 10, 128 << 10) }

    /// The running executable's absolute path (`/proc/self/exe`).
    public static var executablePath: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let size = readlink("/proc/self/exe", &buffer, buffer.count)
        guard size > 0, size < buffer.count else { return nil }
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
}

/// Unbuffered writes to stderr, safe from any thread (C's `stderr` global is not concurrency-safe in Swift 6).
public enum StandardError {
    public static func write(_ text: String) { writeAll(2, text) }

    /// Points C stdio's `stdout` (what `print`, `printf` and `puts` write to) at `stderr`, leaving fd 1 alone: a
    /// plugin's stray output then reaches the host's log instead of the protocol stream on fd 1. Call once at
    /// start-up, before any other thread exists.
    public static func redirectStandardOutput() { switchyard_redirect_stdout_to_stderr() }
}

/// Unbuffered writes to stdout (a prompt without a newline must appear at once).
public enum StandardOutput {
    public static func write(_ text: String) { writeAll(1, text) }
}

private func writeAll(_ fd: Int32, _ text: String) {
    _ = try? Descriptor.writeAll(fd, Array(text.utf8))
}

/// A process held by a pidfd (`pidfd_open`): signals and waits reach the very process it was opened on, never a
/// successor that got its pid after it was reaped. Closed when released.
public final class ProcessDescriptor: Sendable {
    /// The pidfd: readable once the process has exited.
    let fd: Int32

    /// A pidfd of the process that has `pid` now, or nil if there is none (or the kernel has no pidfds).
    public init?(_ pid: Int32) {
        let fd = switchyard_pidfd_open(pid)
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Sends `signal`; false if the process is gone (reaped).
    public func signal(_ signal: Int32) -> Bool { switchyard_pidfd_send_signal(fd, signal) == 0 }

    /// Waits until the process has exited (a zombie counts as exited), for at most `milliseconds` (-1: forever).
    /// - Returns: true if it has, false on timeout.
    public func waitForExit(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return retryingEINTR { poll(&descriptor, 1, milliseconds) } > 0
    }
}

// Facts about processes read from /proc: the subreaper fallback finds the orphans it adopted with ``childPIDs(of:)``,
// the state store asks whether the host that wrote a state file ``isRunning(_:)``, the chaos report measures
// ``residentBytes(of:)``, the benchmark pins itself to one CPU.
extension SystemProcess {
    /// Whether `pid` exists and is not a zombie, read from `/proc/PID/stat`.
    public static func isRunning(_ pid: Int32) -> Bool {
        guard let state = statFields(of: pid)?.first else { return false }
        return state != "Z" && state != "X"
    }

    /// The pids whose parent is `pid`, from `/proc/*/stat`.
    public static func childPIDs(of pid: Int32) -> [Int32] {
        var result: [Int32] = []
        for name in FileSystem.listDirectory("/proc") {
            guard let child = Int32(name), let fields = statFields(of: child) else { continue }
            if fields.count > 1, Int32(fields[1]) == pid { result.append(child) }
        }
        return result.sorted()
    }

    /// The resident set size in bytes of `pid`, or of this process when nil (`/proc/PID/statm`).
    public static func residentBytes(of pid: Int32? = nil) -> Int {
        let path = pid.map { "/proc/\($0)/statm" } ?? "/proc/self/statm"
        guard let text = try? FileSystem.readFile(path) else { return 0 }
        let fields = String(decoding: text, as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The number of CPUs online.
    public static var onlineCPUs: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Pins this process (every thread it has, and so every thread and child it makes) to one CPU
    /// (`sched_setaffinity` on each of `/proc/self/task`), for benchmarks. Returns false on error.
    @discardableResult
    public static func pinToCPU(_ cpu: Int) -> Bool {
        var mask = [UInt64](repeating: 0, count: 16)
        guard cpu >= 0, cpu < mask.count * 64 else { return false }
        mask[cpu / 64] |= 1 << UInt64(cpu % 64)
        // Every thread, not only the caller: Swift concurrency and libuv loops already run on other threads, and a
        // thread (or a child) inherits the mask of the thread that creates it.
        var pinned = mask.withUnsafeBytes { sched_setaffinity(0, UInt($0.count), $0.baseAddress) } == 0
        for name in FileSystem.listDirectory("/proc/self/task") {
            guard let thread = Int32(name) else { continue }
            if mask.withUnsafeBytes({ sched_setaffinity(thread, UInt($0.count), $0.baseAddress) }) != 0 {
                pinned = false
            }
        }
        return pinned
    }
}
