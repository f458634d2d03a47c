import DequeModule

/// Splits a plugin's stderr into lines for the host log: each line capped in length, the byte rate capped per
/// second, and the last lines kept for crash reports.
///
/// A plugin that floods stderr costs the host a bounded amount of work and memory per second; what is dropped is
/// counted and reported.
struct StderrForwarder {
    let maxLineBytes: Int
    let maxBytesPerSecond: Int
    private var partial: [UInt8] = []
    private var truncating = false
    private(set) var recent = Deque<String>()
    private let keep = 20
    private var windowStart: UInt64 = 0
    private var bytesInWindow = 0
    private(set) var droppedBytes = 0

    init(maxLineBytes: Int = 4_096, maxBytesPerSecond: Int) {
        self.maxLineBytes = maxLineBytes
        self.maxBytesPerSecond = maxBytesPerSecond
    }

    private var droppingInWindow = false

    /// Feeds a chunk; returns the complete lines to log, and whether this chunk is the first one of the current
    /// one-second window to go over the rate (each such window is one protocol error for the plugin).
    mutating func consume(_ bytes: [UInt8], now: UInt64) -> (lines: [String], startedDropping: Bool) {
        if now &- windowStart >= 1_000 {
            windowStart = now
            bytesInWindow = 0
            droppingInWindow = false
        }
        var lines: [String] = []
        var accepted = bytes[...]
        let budget = maxBytesPerSecond - bytesInWindow
        let startedDropping = accepted.count > budget && !droppingInWindow
        if accepted.count > budget { droppingInWindow = true }
        if budget <= 0 {
            droppedBytes += bytes.count
            return (lines, startedDropping)
        }
        if accepted.count > budget {
            droppedBytes += accepted.count - budget
            accepted = accepted.prefix(budget)
        }
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
        return (lines, startedDropping)
    }

    /// Milliseconds until the current window ends if its budget is spent (nil: there is budget left). Until then
    /// the host does not read the plugin's stderr at all.
    func pause(now: UInt64) -> UInt64? {
        guard bytesInWindow >= maxBytesPerSecond || droppingInWindow else { return nil }
        let end = windowStart &+ 1_000
        return end > now ? end - now : 1
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
