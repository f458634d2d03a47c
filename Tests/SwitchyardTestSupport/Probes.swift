package import SwitchyardSystem

// Probes for tests: facts about other processes read from /proc (descriptors a plugin inherited, processes left
// behind), through SwitchyardSystem's safe API. The production ones (``SystemProcess/isRunning(_:)``,
// ``SystemProcess/childPIDs(of:)``, ``SystemProcess/residentBytes(of:)``) live there.
extension SystemProcess {
    /// The descriptors a process has open, from `/proc/PID/fd`.
    package static func openDescriptors(of pid: Int32) -> [Int32] {
        FileSystem.listDirectory("/proc/\(pid)/fd").compactMap { Int32($0) }.sorted()
    }
}

/// A process named by its pid *and* its start time. Tests signal and wait for processes they learned about
/// earlier (descendants that wrote their pid to a file, a host's children); by then the process may have been
/// reaped and, with `pid_max` at 32768 and thousands of spawns per run, its pid given to another test's process.
/// An identity reaches only the process it was taken from.
package struct ProcessIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The pid, as the host's `/proc` shows it.
    package let pid: Int32
    /// Field 22 of `/proc/PID/stat`: clock ticks after boot at which the process started.
    package let startTime: UInt64

    /// The identity of the process that has `pid` now, or nil if there is none.
    package init?(_ pid: Int32) {
        guard let startTime = Self.startTime(of: pid) else { return nil }
        self.pid = pid
        self.startTime = startTime
    }

    static func startTime(of pid: Int32) -> UInt64? {
        guard let fields = SystemProcess.statFields(of: pid), fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// A pidfd of this very process, or nil if it is gone (or its pid now names another). The pidfd pins the
    /// process: what is done through it cannot reach a successor.
    private var descriptor: ProcessDescriptor? {
        guard let process = ProcessDescriptor(pid), Self.startTime(of: pid) == startTime else { return nil }
        return process
    }

    /// Sends `signal` to this process if it still exists; false if it is gone.
    @discardableResult
    package func signal(_ signal: Int32) -> Bool { descriptor?.signal(signal) ?? false }

    /// Waits until this process has exited (a zombie counts as exited), for at most `milliseconds`.
    /// - Returns: true if it is gone, false on timeout.
    package func waitForExit(milliseconds: Int32) -> Bool {
        descriptor?.waitForExit(milliseconds: milliseconds) ?? true
    }

    package var description: String { "pid \(pid)" }
}
