public import Logging
import SwitchyardUV

/// The host's log format on stderr: `LEVEL [plugin] message key=value…`. Every line a plugin wrote carries the
/// plugin's name, so interleaved output from many plugins stays readable.
public struct SwitchyardLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let sink: @Sendable (String) -> Void

    /// A handler writing to stderr.
    public init(label: String, level: Logger.Level) {
        self.init(label: label, level: level) { line in StandardError.write(line) }
    }

    /// A handler writing each formatted line to `sink` (tests capture logs this way).
    public init(label: String, level: Logger.Level, sink: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.logLevel = level
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var line = "\(event.level.rawValue.uppercased())"
        if let plugin = merged.removeValue(forKey: "plugin") { line += " [\(plugin)]" }
        line += " \(event.message)"
        for key in merged.keys.sorted() { line += " \(key)=\(merged[key].map { "\($0)" } ?? "")" }
        sink(line + "\n")
    }
}
