import Logging
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// Where a host's protocol trace goes: the trace file, the log (at level `trace`) and control clients subscribed
/// with `trace/subscribe`. One per host, shared by every plugin session.
///
/// While nothing records, ``isOn`` is false and a session's hot path pays one well-predicted branch per read
/// chunk and per written line; nothing is encoded, no clock is read. Each record is encoded once for all sinks.
///
/// - Important: Loop thread only.
final class ProtocolTrace {
    /// Whether any sink records. Connections test it before doing anything else.
    private(set) var isOn = false
    private let file: TraceWriter?
    private let logs: Bool
    /// The control server's delivery to subscribers, while there are any: the plugin's name and the encoded record.
    private var subscribers: ((String, [UInt8]) -> Void)?

    init(file: TraceWriter?, logs: Bool) {
        self.file = file
        self.logs = logs
        update()
    }

    func setSubscribers(_ deliver: ((String, [UInt8]) -> Void)?) {
        subscribers = deliver
        update()
    }

    private func update() { isOn = recordsOn || logs }

    /// Whether anything takes encoded records (the log prints the message itself).
    private var recordsOn: Bool { file != nil || subscribers != nil }

    /// A message as it crossed the pipe (its JSON text, without the newline).
    func message(
        _ bytes: ArraySlice<UInt8>, plugin: String, pid: Int32, direction: TraceDirection, logger: Logger
    ) {
        if recordsOn {
            deliver(
                TraceRecord.encode(
                    milliseconds: WallClock.milliseconds, plugin: plugin, pid: pid, direction: direction,
                    message: bytes),
                plugin: plugin)
        }
        if logs { logger.trace("\(direction == .in ? "←" : "→") \(String(decoding: bytes, as: UTF8.self))") }
    }

    /// A line from the plugin that was not a valid message (nil: it was over the length limit and not kept).
    func invalidLine(
        _ bytes: ArraySlice<UInt8>?, error: ResponseError, plugin: String, pid: Int32, logger: Logger
    ) {
        if recordsOn {
            deliver(
                TraceRecord.encodeInvalid(
                    milliseconds: WallClock.milliseconds, plugin: plugin, pid: pid, raw: bytes, error: error),
                plugin: plugin)
        }
        if logs {
            let text = bytes.map { String(decoding: $0, as: UTF8.self) } ?? "(line over the limit)"
            logger.trace("← \(text) [invalid: \(error.message)]")
        }
    }

    private func deliver(_ record: [UInt8], plugin: String) {
        file?.append(encoded: record)
        subscribers?(plugin, record)
    }
}
