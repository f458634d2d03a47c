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
