// The protocol trace (Protocol/README.md §15.1): every message between the host and its plugins, as one JSON
// record per line, in a file (`switchyard run --trace FILE`), in the log (`--log-level trace`) and streamed to
// control clients that subscribe (`trace/subscribe`). The same record, byte for byte, in all three.

/// Which way a traced message went, seen from the host.
public enum TraceDirection: String, Codable, Sendable, Equatable {
    /// Plugin → host (read from the plugin's stdout).
    case `in`
    /// Host → plugin (written to the plugin's stdin).
    case out
}

/// One record of the protocol trace (`schema/trace.event.json`). Exactly one of three shapes:
///
/// - a message: `time`, `plugin`, `pid`, `direction`, `message` (the JSON message as it was on the wire);
/// - a line that was not a valid message (`direction` is `in`): `time`, `plugin`, `pid`, `direction`, `error` (the
///   protocol error it caused) and `raw` (the line as text; absent for a line over the length limit);
/// - a gap: `time` and `dropped`, the number of records missing here because their reader fell behind (the disk
///   for a file, the socket for a subscriber).
public struct TraceRecord: Codable, Sendable, Equatable {
    /// UTC, ISO 8601 with milliseconds: `2025-01-31T09:41:07.123Z`.
    public var time: String
    public var plugin: String?
    /// The plugin process the message went to or came from: one plugin is two processes during an upgrade (the
    /// old version and the new), and a new one after each restart or wake. Absent from traces before it existed.
    public var pid: Int32?
    public var direction: TraceDirection?
    public var message: JSONValue?
    public var raw: String?
    public var error: ResponseError?
    public var dropped: Int?

    public init(
        time: String, plugin: String? = nil, pid: Int32? = nil, direction: TraceDirection? = nil,
        message: JSONValue? = nil, raw: String? = nil, error: ResponseError? = nil, dropped: Int? = nil
    ) {
        self.time = time
        self.plugin = plugin
        self.pid = pid
        self.direction = direction
        self.message = message
        self.raw = raw
        self.error = error
        self.dropped = dropped
    }

    // MARK: - Encoding straight to bytes
    //
    // The message is spliced in as the bytes that crossed the pipe: it is valid JSON (the host wrote it, or the
    // strict parser accepted it), so a trace costs one copy and no re-encoding.

    /// A message record. `message` is the message's JSON text, without its newline.
    public static func encode(
        milliseconds: Int64, plugin: String, pid: Int32? = nil, direction: TraceDirection, message: ArraySlice<UInt8>
    ) -> [UInt8] {
        var writer = header(milliseconds: milliseconds, capacity: message.count + plugin.utf8.count + 96)
        writePlugin(plugin, pid: pid, to: &writer)
        writer.writeRaw(direction == .in ? ",\"direction\":\"in\",\"message\":" : ",\"direction\":\"out\",\"message\":")
        writer.writeRawBytes(message)
        writer.append(UInt8(ascii: "}"))
        return writer.bytes
    }

    /// A record for a line from a plugin that was not a valid message.
    public static func encodeInvalid(
        milliseconds: Int64, plugin: String, pid: Int32? = nil, raw: ArraySlice<UInt8>?, error: ResponseError
    ) -> [UInt8] {
        var writer = header(milliseconds: milliseconds, capacity: (raw?.count ?? 0) + 176)
        writePlugin(plugin, pid: pid, to: &writer)
        writer.writeRaw(",\"direction\":\"in\"")
        if let raw {
            writer.writeRaw(",\"raw\":")
            writer.writeString(String(decoding: raw, as: UTF8.self))
        }
        writer.writeRaw(",\"error\":")
        writer.write(error.json)
        writer.append(UInt8(ascii: "}"))
        return writer.bytes
    }

    /// A gap of `count` records.
    public static func encodeDropped(milliseconds: Int64, count: Int) -> [UInt8] {
        var writer = header(milliseconds: milliseconds, capacity: 64)
        writer.writeRaw(",\"dropped\":")
        writer.writeInteger(Int64(count))
        writer.append(UInt8(ascii: "}"))
        return writer.bytes
    }

    private static func writePlugin(_ plugin: String, pid: Int32?, to writer: inout JSONWriter) {
        writer.writeRaw(",\"plugin\":")
        writer.writeString(plugin)
        if let pid {
            writer.writeRaw(",\"pid\":")
            writer.writeInteger(Int64(pid))
        }
    }

    private static func header(milliseconds: Int64, capacity: Int) -> JSONWriter {
        var writer = JSONWriter(capacity: capacity)
        writer.writeRaw("{\"time\":\"")
        appendTimestamp(milliseconds: milliseconds, to: &writer)
        writer.append(UInt8(ascii: "\""))
        return writer
    }

    /// `milliseconds` since the Unix epoch as UTC ISO 8601 with milliseconds (`1970-01-01T00:00:00.000Z`).
    public static func timestamp(milliseconds: Int64) -> String {
        var writer = JSONWriter(capacity: 24)
        appendTimestamp(milliseconds: milliseconds, to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Writes the timestamp's 24 ASCII bytes with integer arithmetic only: every traced message pays for it.
    private static func appendTimestamp(milliseconds: Int64, to writer: inout JSONWriter) {
        // Floor division, so instants before 1970 get a date too (a wrong clock must still give a valid record).
        func divide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
            let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
            return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
        }
        let (seconds, millisecond) = divide(milliseconds, 1_000)
        let (days, secondOfDay) = divide(seconds, 86_400)
        // Howard Hinnant's civil_from_days: the proleptic Gregorian date of a day count, in integer arithmetic.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        // Clamped to the years the format can say (a clock that far off is wrong anyway).
        let year = min(9_999, max(0, yearOfEra + era * 400 + (month <= 2 ? 1 : 0)))
        func digits(_ value: Int64, _ width: Int64) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                writer.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4)
        writer.append(UInt8(ascii: "-"))
        digits(month, 2)
        writer.append(UInt8(ascii: "-"))
        digits(day, 2)
        writer.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3_600, 2)
        writer.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        writer.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        writer.append(UInt8(ascii: "."))
        digits(millisecond, 3)
        writer.append(UInt8(ascii: "Z"))
    }
}

/// `trace/subscribe` (client → host): receive a `trace/event` for every message between the host and its plugins
/// (of the plugins named, or of all), from now on. While nobody subscribes, tracing costs nothing.
public enum TraceSubscribeRequest: ControlRequest {
    public static let method = "trace/subscribe"

    public struct Params: Codable, Sendable, Equatable {
        /// Only these plugins' messages (default: every plugin's).
        public var plugins: [String]?
        public init(plugins: [String]? = nil) { self.plugins = plugins }
    }

    public typealias Result = Empty
}

/// `trace/unsubscribe` (client → host): no more `trace/event`s.
public enum TraceUnsubscribeRequest: ControlRequest {
    public static let method = "trace/unsubscribe"
    public typealias Params = Empty
    public typealias Result = Empty
}

/// `trace/event` (host → trace subscriber): one record of the protocol trace.
public enum TraceEventNotification: ControlNotification {
    public static let method = "trace/event"
    public typealias Params = TraceRecord
}
