import CSwitchyardSystem
import Glibc

/// Another process's resource limits and what it uses of them (`prlimit(2)`, `/proc`), for fault experiments: a
/// memory or descriptor limit put on a plugin that is already running. Linux lets a process change the limits of
/// another of the same user; raising a hard limit needs privilege, so only soft limits are changed, and the previous
/// soft limit can always be put back.
public enum ResourceLimits {
    /// The limits a fault experiment sets.
    public enum Resource: Sendable, CustomStringConvertible {
        /// `RLIMIT_AS`: address space, in bytes; an allocation beyond it fails (`mmap` and `brk` return `ENOMEM`).
        case addressSpace
        /// `RLIMIT_NOFILE`: one more than the highest descriptor number it may open; beyond it `open`, `pipe`,
        /// `socket`, `accept` fail with `EMFILE`.
        case descriptors
        /// `RLIMIT_FSIZE`: the largest file it may write, in bytes; a write beyond it fails with `EFBIG` (and raises
        /// `SIGXFSZ`, which the host ignores): a full disk for that process alone.
        case fileSize

        var raw: Int32 {
            switch self {
            case .addressSpace: Int32(bitPattern: RLIMIT_AS.rawValue)
            case .descriptors: Int32(bitPattern: RLIMIT_NOFILE.rawValue)
            case .fileSize: Int32(bitPattern: RLIMIT_FSIZE.rawValue)
            }
        }

        public var description: String {
            switch self {
            case .addressSpace: "RLIMIT_AS"
            case .descriptors: "RLIMIT_NOFILE"
            case .fileSize: "RLIMIT_FSIZE"
            }
        }
    }

    /// No limit (`RLIM_INFINITY`).
    public static let unlimited = UInt64.max

    /// The soft and hard limits of `pid`.
    public static func get(_ resource: Resource, of pid: Int32) throws(SystemError) -> (soft: UInt64, hard: UInt64) {
        var limits: [UInt64] = [0, 0]
        _ = try syscall("prlimit \(pid) \(resource)") {
            limits.withUnsafeMutableBufferPointer { buffer in
                switchyard_prlimit(pid, resource.raw, nil, buffer.baseAddress)
            }
        }
        return (limits[0], limits[1])
    }

    /// Sets the soft limit of `pid`, keeping its hard limit (so that the soft one can be put back without
    /// privilege). A value above the hard limit is clamped to it.
    public static func setSoft(_ resource: Resource, of pid: Int32, to value: UInt64) throws(SystemError) {
        let hard = try get(resource, of: pid).hard
        let wanted: [UInt64] = [min(value, hard), hard]
        _ = try syscall("prlimit \(pid) \(resource)") {
            wanted.withUnsafeBufferPointer { buffer in switchyard_prlimit(pid, resource.raw, buffer.baseAddress, nil) }
        }
    }

    /// The address space of `pid` now (`VmSize` of `/proc/PID/status`), in bytes; nil if it cannot be read.
    public static func addressSpace(of pid: Int32) -> UInt64? {
        guard let status = try? FileSystem.readFile("/proc/\(pid)/status") else { return nil }
        for line in String(decoding: status, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmSize:") {
            // "VmSize:\t  123456 kB"
            return line.dropFirst("VmSize:".count).split(whereSeparator: \.isWhitespace).first.flatMap { UInt64($0) }
                .map { $0 * 1_024 }
        }
        return nil
    }

    /// The highest descriptor number `pid` has open; nil if `/proc/PID/fd` cannot be read.
    public static func highestDescriptor(of pid: Int32) -> Int? {
        FileSystem.listDirectory("/proc/\(pid)/fd").compactMap { Int($0) }.max()
    }
}
