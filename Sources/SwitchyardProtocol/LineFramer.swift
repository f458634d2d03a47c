/// Splits a byte stream into lines, incrementally: bytes arrive at arbitrary boundaries, several lines per read or
/// one line across many reads.
///
/// - A line ends at `\n`; a `\r` right before it is dropped (`\r\n` works).
/// - A line longer than ``maxLineLength`` (not counting its terminator) is reported once as
///   ``Event/lineTooLong(length:lineNumber:)``; its remaining bytes are discarded up to the next `\n`, then framing
///   resumes. Memory stays bounded by the limit plus one read, however long the line.
/// - ``finish()`` at end of stream yields an unterminated last line.
///
/// UTF-8 and JSON validity are the parser's business; the framer is byte-level and has no I/O (LSP's
/// `JSONMessageParser` shape). The rules themselves are ``LineRules``, which a reader that frames in place in its own
/// buffer (the Swift SDK's stdin loop) applies too.
public struct LineFramer: Sendable {
    public enum Event: Sendable, Equatable {
        /// A complete line without its terminator, and its 1-based number in the stream.
        case line(ArraySlice<UInt8>, lineNumber: Int)
        /// A line exceeded the limit; `length` is how long it was seen to be when rejected.
        case lineTooLong(length: Int, lineNumber: Int)
    }

    public let maxLineLength: Int
    private var buffer: [UInt8] = []
    /// Start of the unconsumed part of `buffer`.
    private var start = 0
    /// Where to resume searching for `\n` (everything before it in the pending line has no newline).
    private var scanFrom = 0
    /// Inside an oversize line: drop bytes until the next `\n`.
    private var discarding = false
    public private(set) var lineCount = 0
    /// The first bytes (at most ``headLength``) of the last line reported as too long: enough for its `id` and
    /// whether it is a request or an answer (``LineHead``), so the reader can still name the message it carried.
    public private(set) var oversizeHead: [UInt8] = []
    /// How much of an oversize line ``oversizeHead`` keeps.
    public static let headLength = 512

    public init(maxLineLength: Int) {
        self.maxLineLength = max(1, maxLineLength)
    }

    /// Bytes received but not yet returned as a line.
    public var pendingByteCount: Int { buffer.count - start }

    /// Adds bytes from the stream.
    public mutating func append(_ bytes: [UInt8]) {
        if start == buffer.count {
            // Common case: nothing pending, take the chunk as the buffer without copying.
            buffer = bytes
            start = 0
            scanFrom = 0
        } else {
            if start > 0 && start >= buffer.count / 2 {
                buffer.removeSubrange(0..<start)
                scanFrom -= start
                start = 0
            }
            buffer.append(contentsOf: bytes)
        }
    }

    /// The next complete line or framing error, or `nil` when more bytes are needed.
    public mutating func next() -> Event? {
        while true {
            if discarding {
                guard let newline = firstNewline(from: start) else {
                    // Everything pending belongs to the oversize line.
                    buffer.removeAll(keepingCapacity: true)
                    start = 0
                    scanFrom = 0
                    return nil
                }
                discarding = false
                start = newline + 1
                scanFrom = start
                continue
            }
            if let newline = firstNewline(from: scanFrom) {
                let end = LineRules.contentEnd(buffer, start: start, terminator: newline)
                let lineStart = start
                start = newline + 1
                scanFrom = start
                lineCount += 1
                if end - lineStart > maxLineLength {
                    oversizeHead = Array(buffer[lineStart..<min(end, lineStart + Self.headLength)])
                    return .lineTooLong(length: end - lineStart, lineNumber: lineCount)
                }
                return .line(buffer[lineStart..<end], lineNumber: lineCount)
            }
            scanFrom = buffer.count
            let pending = buffer.count - start
            // A trailing "\r" may still be dropped when its "\n" arrives, so allow one extra byte for it.
            let allowance = buffer.last == UInt8(ascii: "\r") ? maxLineLength + 1 : maxLineLength
            if pending > allowance {
                lineCount += 1
                discarding = true
                oversizeHead = Array(buffer[start..<min(buffer.count, start + Self.headLength)])
                buffer.removeAll(keepingCapacity: true)
                start = 0
                scanFrom = 0
                return .lineTooLong(length: pending, lineNumber: lineCount)
            }
            return nil
        }
    }

    /// At end of stream: the unterminated last line, if any (JSON Lines recommends, but does not require, a final
    /// newline).
    public mutating func finish() -> Event? {
        defer {
            buffer.removeAll()
            start = 0
            scanFrom = 0
        }
        if discarding {
            discarding = false
            return nil
        }
        guard start < buffer.count else { return nil }
        let end = LineRules.contentEnd(buffer, start: start, terminator: buffer.count)
        lineCount += 1
        if end - start > maxLineLength {
            oversizeHead = Array(buffer[start..<min(end, start + Self.headLength)])
            return .lineTooLong(length: end - start, lineNumber: lineCount)
        }
        return .line(buffer[start..<end], lineNumber: lineCount)
    }

    private func firstNewline(from position: Int) -> Int? {
        // Over a span: no uniqueness or bounds bookkeeping of the array per byte (every byte read passes here).
        let bytes = buffer.span
        var index = position
        while index < bytes.count {
            if bytes[index] == LineRules.newline { return index }
            index += 1
        }
        return nil
    }
}

/// How JSON Lines are framed on every stream of the protocol (spec §1), stated once for the two readers: the
/// incremental ``LineFramer`` (host, control client, conformance checker) and the Swift SDK's stdin loop, which
/// frames in place in its read buffer and hands lines on as ranges.
///
/// - A line ends at ``newline``; a `\r` right before it is not part of the line (``contentEnd(_:start:terminator:)``).
/// - A line of only spaces and tabs is blank (``isBlank(_:start:end:)``): skipped, not an error, but counted, so
///   line numbers in errors match an editor's.
/// - An unterminated last line is still a line at end of stream.
///
/// The length bound is the reader's: ``LineFramer`` enforces its ``LineFramer/maxLineLength``; the SDK applies
/// none, since the host bounds what it sends and a plugin has no one to report a long line to. UTF-8 and JSON
/// validity are the parser's.
public enum LineRules {
    /// The byte that ends a line. Computed and inlinable, so a loop over every byte read compares with a constant
    /// instead of loading a global.
    @inlinable public static var newline: UInt8 { 0x0A }

    /// The end of the content of the line `bytes[start..<terminator]` (`terminator`: its `\n`, or the end of the
    /// stream): one `\r` right before the terminator is dropped, so `\r\n` works.
    @inlinable
    public static func contentEnd(_ bytes: [UInt8], start: Int, terminator: Int) -> Int {
        terminator > start && bytes[terminator - 1] == UInt8(ascii: "\r") ? terminator - 1 : terminator
    }

    /// Whether a line is blank: only spaces and tabs (a stray `print()` in a plugin).
    @inlinable
    public static func isBlank(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// ``isBlank(_:)`` for `bytes[start..<end]`, without a slice: a JSON line starts with `{` and is known not
    /// blank after one byte.
    @inlinable
    public static func isBlank(_ bytes: [UInt8], start: Int, end: Int) -> Bool {
        if start < end && bytes[start] == UInt8(ascii: "{") { return false }
        var index = start
        while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        return index == end
    }
}
