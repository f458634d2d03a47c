import DequeModule

/// Splits a plugin's stderr into lines for the host log: each line capped in length, the byte rate capped per
/// second, and the last lines kept for crash reports.
///
/// Over the rate, the rest of the second is dropped and counted, never held back: journald's answer to a log flood
/// ("Suppressed N messages"), because a plugin blocked in `write(2)` on its stderr misses its heartbeat and would be
/// judged hung for the host's choice not to read. The session has the transport drop the excess without copying it
/// (``PluginTransport/discardErrors()``) and logs one line per second that dropped any.
struct StderrForwarder {
    let maxLineBytes: Int
    let maxBytesPerSecond: Int
    private var partial: [UInt8] = []
    private var truncating = false
    private(set) var recent = Deque<String>()
    private let keep = 20
    private var windowStart: UInt64 = 0
    private var bytesInWindow = 0
    /// Bytes dropped here over the rate (the part of a chunk past the budget), over the plugin's life; what the
    /// transport discards after that is counted there.
    private(set) var droppedBytes = 0

    init(maxLineBytes: Int = 4_096, maxBytesPerSecond: Int) {
        self.maxLineBytes = maxLineBytes
        self.maxBytesPerSecond = maxBytesPerSecond
    }

    /// Feeds a chunk read at `now` (milliseconds); returns the complete lines to log, and, if the current one-second
    /// window's budget is spent, when that window ends (the session drops everything until then).
    mutating func consume(_ bytes: [UInt8], now: UInt64) -> (lines: [String], overBudgetUntil: UInt64?) {
        if now &- windowStart >= 1_000 {
            windowStart = now
            bytesInWindow = 0
        }
        var lines: [String] = []
        let budget = max(0, maxBytesPerSecond - bytesInWindow)
        let accepted = bytes.prefix(budget)
        droppedBytes += bytes.count - accepted.count
        bytesInWindow += accepted.count
        for byte in accepted {
            if byte == 0x0A {
                emit(&lines)
                continue
            }
            if partial.count < maxLineBytes {
                partial.append(byte)
            } else {
                truncating = true
            }
        }
        return (lines, bytesInWindow >= maxBytesPerSecond ? windowStart &+ 1_000 : nil)
    }

    /// The last lines, at most `maxLines` and `maxBytes` of them (the last line is kept even if alone it is longer;
    /// it is itself capped at ``maxLineBytes``): what errors carry so an author sees the traceback that led to them.
    func tail(maxLines: Int = 20, maxBytes: Int = 4_096) -> [String] {
        var lines: [String] = []
        var bytes = 0
        for line in recent.reversed().prefix(maxLines) {
            bytes += line.utf8.count + 1
            if bytes > maxBytes && !lines.isEmpty { break }
            lines.append(line)
        }
        return lines.reversed()
    }

    /// At EOF: the last unterminated line, if any.
    mutating func finish() -> [String] {
        var lines: [String] = []
        if !partial.isEmpty { emit(&lines) }
        return lines
    }

    private mutating func emit(_ lines: inout [String]) {
        if partial.last == 0x0D { partial.removeLast() }
        var line = String(decoding: partial, as: UTF8.self)
        if truncating { line += " …[line truncated at \(maxLineBytes) bytes]" }
        partial.removeAll(keepingCapacity: true)
        truncating = false
        recent.append(line)
        if recent.count > keep { recent.removeFirst() }
        lines.append(line)
    }
}
