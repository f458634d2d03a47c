import CLibUV
import Glibc

// Test and benchmark probes: facts about other processes read from /proc, and CPU pinning. Tests assert on
// them (descriptors a plugin inherited, orphans left behind, memory after a flood); the benchmark pins itself to
// one CPU. Two production paths use them too: the subreaper fallback finds the orphans it adopted with
// `childPIDs`, and the state store asks whether the host that wrote a state file `isRunning`.
extension SystemProcess {
    /// Whether `pid` exists and is not a zombie, read from `/proc/PID/stat`.
    public static func isRunning(_ pid: Int32) -> Bool {
        guard let state = statFields(of: pid)?.first else { return false }
        return state != "Z" && state != "X"
    }

    /// The descriptors a process has open, from `/proc/PID/fd`.
    public static func openDescriptors(of pid: Int32) -> [Int32] {
        FileSystem.listDirectory("/proc/\(pid)/fd").compactMap { Int32($0) }.sorted()
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

    /// Peak resident set size of this process in bytes.
    public static var peakResidentBytes: Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    /// The number of CPUs this process may run on.
    public static var availableCPUs: Int { Int(uv_available_parallelism()) }

    /// Pins this process (every thread it has, and so every thread and child it makes) to one CPU
    /// (`sched_setaffinity`), for benchmarks. Returns false on error.
    @discardableResult
    public static func pinToCPU(_ cpu: Int32) -> Bool { switchyard_pin_cpu(cpu) == 0 }
}

/// A process named by its pid *and* its start time. Tests signal and wait for processes they learned about
/// earlier (descendants that wrote their pid to a file, a host's children); by then the process may have been
/// reaped and, with `pid_max` at 32768 and thousands of spawns per run, its pid given to another test's process.
/// An identity reaches only the process it was taken from.
public struct ProcessIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The pid, as the host's `/proc` shows it.
    public let pid: Int32
    /// Field 22 of `/proc/PID/stat`: clock ticks after boot at which the process started.
    public let startTime: UInt64

    /// The identity of the process that has `pid` now, or nil if there is none.
    public init?(_ pid: Int32) {
        guard let startTime = Self.startTime(of: pid) else { return nil }
        self.pid = pid
        self.startTime = startTime
    }

    static func startTime(of pid: Int32) -> UInt64? {
        guard let fields = SystemProcess.statFields(of: pid), fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// Runs `body` with a pidfd of this very process, or returns nil if it is gone (or its pid now names another).
    /// The pidfd pins the process: what `body` does through it cannot reach a successor.
    private func withPidfd<T>(_ body: (Int32) -> T) -> T? {
        let fd = switchyard_pidfd_open(pid)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        guard Self.startTime(of: pid) == startTime else { return nil }
        return body(fd)
    }

    /// Sends `signal` to this process if it still exists; false if it is gone.
    @discardableResult
    public func signal(_ signal: Int32) -> Bool {
        withPidfd { switchyard_pidfd_send_signal($0, signal) == 0 } ?? false
    }

    /// Waits until this process has exited (a zombie counts as exited), for at most `milliseconds`.
    /// - Returns: true if it is gone, false on timeout.
    public func waitForExit(milliseconds: Int32) -> Bool {
        withPidfd { fd in
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, milliseconds) > 0
        } ?? true
    }

    public var description: String { "pid \(pid)" }
}
