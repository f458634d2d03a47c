public import Logging
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// `LEVEL [plugin] message key=value…`, for people; prefixed with an ISO 8601 timestamp at debug and trace.
    case text
    /// One JSON object per line (`timestamp`, `level`, `label`, `message`, `plugin`, `metadata`), for collectors.
    case json
}

/// The host's log format on stderr: `LEVEL [plugin] message key=value…`. Every line a plugin wrote carries the
/// plugin's name, so interleaved output from many plugins stays readable.
public struct SwitchyardLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let format: LogFormat
    private let timestamps: Bool
    private let sink: @Sendable (String) -> Void

    /// A handler writing to stderr. Text lines carry a timestamp when `level` is debug or trace (where the order
    /// and spacing of events is what one reads them for); JSON lines always do.
    public init(label: String, level: Logger.Level, format: LogFormat = .text) {
        self.init(label: label, level: level, format: format) { line in StandardError.write(line) }
    }

    /// A handler writing each formatted line to `sink` (tests capture logs this way).
    public init(
        label: String, level: Logger.Level, format: LogFormat = .text, sink: @escaping @Sendable (String) -> Void
    ) {
        self.label = label
        self.logLevel = level
        self.format = format
        self.timestamps = format == .json || level <= .debug
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let plugin = merged.removeValue(forKey: "plugin")
        let timestamp = timestamps ? Self.iso8601(millisecondsSinceEpoch: FileSystem.millisecondsSinceEpoch) : nil
        switch format {
        case .text:
            var line = timestamp.map { "\($0) " } ?? ""
            line += event.level.rawValue.uppercased()
            if let plugin { line += " [\(plugin)]" }
            line += " \(event.message)"
            for key in merged.keys.sorted() { line += " \(key)=\(merged[key].map { "\($0)" } ?? "")" }
            sink(line + "\n")
        case .json:
            var object: JSONObject = [:]
            if let timestamp { object["timestamp"] = .string(timestamp) }
            object["level"] = .string(event.level.rawValue)
            object["label"] = .string(label)
            if let plugin { object["plugin"] = Self.json(plugin) }
            object["message"] = .string("\(event.message)")
            if !merged.isEmpty {
                var fields: JSONObject = [:]
                for key in merged.keys.sorted() { fields[key] = merged[key].map(Self.json) }
                object["metadata"] = .object(fields)
            }
            sink(JSONWriter.string(.object(object)) + "\n")
        }
    }

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let fields):
            .object(
                fields.keys.sorted().reduce(into: JSONObject()) { object, key in object[key] = fields[key].map(json) })
        }
    }

    /// `2025-01-31T09:05:03.042Z`: ISO 8601 in UTC with milliseconds, the trace's format (one formatter for both).
    static func iso8601(millisecondsSinceEpoch: Int64) -> String {
        TraceRecord.timestamp(milliseconds: millisecondsSinceEpoch)
    }
}
