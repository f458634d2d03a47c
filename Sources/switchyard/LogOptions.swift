import ArgumentParser
import Logging
import SwitchyardHost

/// `--log-level`, shared by every subcommand.
struct LogOptions: ParsableArguments {
    @Option(
        name: .long, help: "trace, debug, info, notice, warning, error or critical.",
        transform: { text in
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw ValidationError("unknown log level '\(text)'")
            }
            return level
        })
    var logLevel: Logger.Level = .notice

    func makeLogger(label: String = "switchyard") -> Logger {
        let level = logLevel
        LoggingSystem.bootstrap { label in SwitchyardLogHandler(label: label, level: level) }
        return Logger(label: label)
    }
}
