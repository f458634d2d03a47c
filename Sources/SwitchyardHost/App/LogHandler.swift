public import Logging
import SwitchyardProtocol
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
    public init(label: String, level: Logger.Level, format: LogFormat = .text, sink: @escaping @Sendable (String) -> Void) {
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
            .object(fields.keys.sorted().reduce(into: JSONObject()) { object, key in object[key] = fields[key].map(json) })
        }
    }

    /// `2025-01-31T09:05:03.042Z`: ISO 8601 in UTC with milliseconds (the civil date from the day count, Howard
    /// Hinnant's algorithm, so no C time functions and no Foundation).
    static func iso8601(millisecondsSinceEpoch: Int64) -> String {
        let milliseconds = Int(millisecondsSinceEpoch % 86_400_000 + 86_400_000) % 86_400_000
        let days = Int((millisecondsSinceEpoch - Int64(milliseconds)) / 86_400_000)
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let seconds = milliseconds / 1_000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3_600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(milliseconds % 1_000, 3))Z"
    }
}
