public import Logging
public import SwitchyardProtocol
public import SwitchyardSystem

/// A protocol trace file (Protocol/README.md §15.1): one ``TraceRecord`` per line, written on its own thread.
///
/// Bounded on disk: when the file reaches `maxBytes` it moves to `PATH.1` (replacing the previous one) and a new file
/// starts, so at most twice the bound is kept and the newest records are in `PATH`. Bounded in memory: records wait
/// in a queue of at most 8 MiB; if the disk falls that far behind, records are dropped and a `{time, dropped}`
/// record marks the gap. Recording never waits for the disk, so the host's loop can record every message it sees.
///
/// `switchyard run --trace` hands one to the host (``HostOptions/trace``); any other tool that talks to plugins
/// (a conformance checker, a test harness) can record its own exchanges the same way with ``record(plugin:direction:message:)``.
public final class TraceWriter: Sendable {
    /// 64 MiB per file, so at most 128 MiB with the rotated one.
    public static let defaultMaxBytes = 64 << 20
    /// Below this a file would hold too few records to be of use (a handshake is ~1 KiB).
    public static let minimumMaxBytes = 4 << 10

    private let lines: RotatingLineWriter

    /// Creates (or truncates) `path`, mode 0600. Write errors later are logged once to `logger`, and end the trace.
    public init(path: String, maxBytes: Int = defaultMaxBytes, logger: Logger? = nil) throws(SystemError) {
        lines = try RotatingLineWriter(
            path: path, maxFileBytes: max(Self.minimumMaxBytes, maxBytes),
            droppedLine: { count in TraceRecord.encodeDropped(milliseconds: WallClock.milliseconds, count: count) },
            onFailure: { error in logger?.error("the protocol trace \(path) stopped: \(error)") })
    }

    public var path: String { lines.path }
    public var maxBytes: Int { lines.maxFileBytes }

    /// Records one message as it crossed the pipe: its JSON text, without the newline. Never waits for the disk.
    public func record(plugin: String, direction: TraceDirection, message: ArraySlice<UInt8>) {
        lines.append(
            TraceRecord.encode(
                milliseconds: WallClock.milliseconds, plugin: plugin, direction: direction, message: message))
    }

    /// Records a line from a plugin that was not a valid message, with the error it caused.
    public func recordInvalid(plugin: String, raw: ArraySlice<UInt8>?, error: ResponseError) {
        lines.append(
            TraceRecord.encodeInvalid(milliseconds: WallClock.milliseconds, plugin: plugin, raw: raw, error: error))
    }

    /// A record already encoded (the host encodes each record once for the file, the log and subscribers).
    func append(encoded record: [UInt8]) { lines.append(record) }

    /// Records written, dropped, and rotations so far.
    public var statistics: RotatingLineWriter.Statistics { lines.statistics }

    /// Writes what is queued and closes the file, waiting at most `timeoutMs` for the disk. Call it once the host has
    /// stopped, off the host's loop thread.
    public func close(timeoutMs: UInt64 = 5_000) { lines.close(timeoutMs: timeoutMs) }
}
