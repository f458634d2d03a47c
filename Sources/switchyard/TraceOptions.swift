import ArgumentParser
import Logging
import SwitchyardHost

/// `--trace FILE` and `--trace-max-bytes N`: the protocol trace file (Protocol/README.md §15.1), for any command that
/// talks to plugins.
struct TraceOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Record every message between the host and each plugin in FILE, one JSON object per line: {time, plugin, direction, message}.",
            valueName: "FILE"))
    var trace: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Bound of the trace file in bytes; when it is reached the file moves to FILE.1 (replacing it) and a new one starts, so at most twice this is kept. Default 64 MiB.",
            valueName: "N"))
    var traceMaxBytes: Int = TraceWriter.defaultMaxBytes

    func validate() throws {
        guard traceMaxBytes >= TraceWriter.minimumMaxBytes else {
            throw ValidationError("--trace-max-bytes must be at least \(TraceWriter.minimumMaxBytes)")
        }
    }

    /// Opens the trace file (nil without `--trace`). The caller closes it once the host has stopped.
    func makeWriter(logger: Logger) throws -> TraceWriter? {
        guard let trace else { return nil }
        do {
            return try TraceWriter(path: trace, maxBytes: traceMaxBytes, logger: logger)
        } catch {
            throw RunFailure(.cannotCreate, message: "cannot write the trace file: \(error)")
        }
    }
}
