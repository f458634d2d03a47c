import ArgumentParser
import Logging
import SwitchyardHost
import Synchronization

/// `--log-level` and `--log-format`, shared by every subcommand.
struct LogOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "Log at this level and above: trace, debug, info, notice, warning, error or critical (debug and trace lines carry ISO 8601 timestamps).",
        transform: { text in
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw ValidationError("unknown log level '\(text)'")
            }
            return level
        })
    var logLevel: Logger.Level = .notice

    @Option(
        name: .long, help: "Write the log as text (for people) or json (one object per line, for log collectors).",
        transform: { text in
            guard let format = LogFormat(rawValue: text.lowercased()) else {
                throw ValidationError("unknown log format '\(text)' (text, json)")
            }
            return format
        })
    var logFormat: LogFormat = .text

    /// swift-log allows one bootstrap per process; a second call would trap.
    private static let bootstrapped = Atomic(false)

    func makeLogger(label: String = "switchyard") -> Logger {
        let (level, format) = (logLevel, logFormat)
        if !Self.bootstrapped.exchange(true, ordering: .sequentiallyConsistent) {
            LoggingSystem.bootstrap { label in
                SwitchyardLogHandler(label: label, level: level, format: format) { LogOutput.write($0) }
            }
        }
        return Logger(label: label)
    }
}
