public import SwitchyardUV

/// How a plugin process ended, and why, as the host classifies it (systemd's and Chrome's exit classes).
public struct PluginTermination: Sendable, Equatable, CustomStringConvertible {
    public enum Cause: Sendable, Equatable {
        /// The host asked it to stop (shutdown ladder).
        case stopped
        /// It exited on its own with status 0.
        case exitedCleanly
        /// It exited on its own with a non-zero status.
        case exitedWithError
        /// A signal the host did not send (a crash: SIGSEGV, SIGABRT, an outside SIGKILL...).
        case crashed
        /// The host killed it: the reason says why (hung, stopped reading, protocol violations, timeout).
        case killed(String)
        /// It could not be started at all (exec failed).
        case failedToStart(String)
    }

    public let status: TerminationStatus?
    public let cause: Cause
    /// The last lines it wrote to stderr, for the crash report.
    public let stderrTail: [String]

    /// Abnormal in Erlang's sense: anything but an exit the host asked for or a clean exit.
    public var isAbnormal: Bool {
        switch cause {
        case .stopped, .exitedCleanly: false
        default: true
        }
    }

    /// The description as what the plugin did or underwent, after "it": "it was killed by the host: …", "it exited
    /// with code 3", "it crashed (…)".
    public var clause: String {
        switch cause {
        case .killed, .stopped: "was \(description)"
        default: description
        }
    }

    public var description: String {
        let how = status.map { "\($0)" } ?? "not started"
        switch cause {
        case .stopped: return "stopped (\(how))"
        case .exitedCleanly: return "exited cleanly"
        case .exitedWithError: return how
        case .crashed: return "crashed (\(how))"
        case .killed(let reason): return "killed by the host: \(reason)"
        case .failedToStart(let reason): return "failed to start: \(reason)"
        }
    }
}
