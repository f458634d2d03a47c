import Glibc

/// The monotonic clock (`CLOCK_MONOTONIC`: a vDSO call, no syscall), for bounds on blocking waits outside a loop.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary start (boot).
    public static var nanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Milliseconds since an arbitrary start (boot).
    public static var milliseconds: Int64 { Int64(nanoseconds / 1_000_000) }
}

/// The wall clock, for timestamps people read (protocol traces, logs, file names); deadlines use monotonic clocks.
public enum WallClock {
    /// Milliseconds since the Unix epoch (`CLOCK_REALTIME`: a vDSO call, no syscall).
    public static var milliseconds: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
