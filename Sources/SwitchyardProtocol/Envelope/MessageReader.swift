/// A line that could not be taken as a message, with everything needed to report it: the JSON-RPC error, the
/// 1-based line number in the stream, the field at fault and an excerpt of the line.
public struct ProtocolViolation: Error, Sendable, Equatable, CustomStringConvertible {
    public let error: ResponseError
    public let lineNumber: Int
    /// The request's id when it could be read, so the peer can still get an error response.
    public let requestID: RequestID?
    /// The id of the request this line answered, when it is an answer over the length limit whose head names it:
    /// the reader's side fails that request at once with this error.
    public var answerID: RequestID? = nil

    public var description: String { "line \(lineNumber): \(error.message)" }
}

/// Turns a byte stream into messages: ``LineFramer`` + ``JSONParser`` + envelope checks.
///
/// Empty (or whitespace-only) lines are skipped: a stray `print()` must not count as a fault. Everything else that
/// is not a valid message becomes a ``ProtocolViolation`` and the stream goes on with the next line.
public struct MessageReader: Sendable {
    public enum Event: Sendable, Equatable {
        case message(Message, lineNumber: Int)
        case violation(ProtocolViolation)
    }

    private var framer: LineFramer
    public let maxDepth: Int
    public var maxLineLength: Int { framer.maxLineLength }
    public var linesRead: Int { framer.lineCount }

    public init(maxLineLength: Int, maxDepth: Int = JSONParser.defaultMaxDepth) {
        framer = LineFramer(maxLineLength: maxLineLength)
        self.maxDepth = maxDepth
    }

    public mutating func append(_ bytes: [UInt8]) { framer.append(bytes) }

    /// The next message or violation, or nil when more bytes are needed.
    public mutating func next() -> Event? {
        while let framed = framer.next() {
            if let event = interpret(framed) { return event }
        }
        return nil
    }

    /// At end of stream: the unterminated last line, if any.
    public mutating func finish() -> Event? {
        guard let framed = framer.finish() else { return nil }
        return interpret(framed)
    }

    /// ``next()`` with the line the event came from (nil for a line over the limit, which is not kept), for a
    /// protocol trace, which records what was on the wire. A separate method, so ``next()`` pays nothing for it.
    public mutating func nextWithLine() -> (event: Event, line: ArraySlice<UInt8>?)? {
        while let framed = framer.next() {
            if let event = interpret(framed) { return (event, Self.line(of: framed)) }
        }
        return nil
    }

    /// What ``nextKeepingAnswers()`` hands over: an event, or an answer left unparsed for the request it answers.
    public enum Next: Sendable, Equatable {
        case event(Event)
        /// `{"jsonrpc":"2.0","id":id,"result":…}` in the shape every SDK writes (``decodeLine(_:lineNumber:maxDepth:)``
        /// would take it on its byte path): `result` is the value's bytes, not yet parsed, for the pending request's
        /// own reader; ``decodeAnswer(_:id:result:lineNumber:maxDepth:)`` reads it as ``next()`` would have.
        case answer(id: Int64, line: ArraySlice<UInt8>, result: Range<Int>, lineNumber: Int)
    }

    /// ``next()``, except that an answer in the common shape is not parsed: a host reads most answers into a typed
    /// value straight from their bytes (`coordinator/route`'s), and a tree built for them first was most of the cost.
    public mutating func nextKeepingAnswers() -> Next? {
        while let framed = framer.next() {
            if case .line(let bytes, let lineNumber) = framed, let parts = Self.answerParts(bytes) {
                return .answer(id: parts.id, line: bytes, result: parts.result, lineNumber: lineNumber)
            }
            if let event = interpret(framed) { return .event(event) }
        }
        return nil
    }

    /// An answer ``nextKeepingAnswers()`` kept, read as ``next()`` would have read it.
    public static func decodeAnswer(
        _ line: ArraySlice<UInt8>, id: Int64, result: Range<Int>, lineNumber: Int, maxDepth: Int
    ) -> Event {
        if let answer = response(line, id: id, result: result, maxDepth: maxDepth) {
            return .message(answer, lineNumber: lineNumber)
        }
        return decodeGenerally(line, lineNumber: lineNumber, maxDepth: maxDepth)
    }

    /// ``finish()`` with the line the event came from.
    public mutating func finishWithLine() -> (event: Event, line: ArraySlice<UInt8>?)? {
        guard let framed = framer.finish(), let event = interpret(framed) else { return nil }
        return (event, Self.line(of: framed))
    }

    private static func line(of framed: LineFramer.Event) -> ArraySlice<UInt8>? {
        if case .line(let bytes, _) = framed { return bytes }
        return nil
    }

    private func interpret(_ framed: LineFramer.Event) -> Event? {
        switch framed {
        case .lineTooLong(let length, let lineNumber):
            // Rejected while it arrives; its head still says which message it was (`id` comes first in every SDK).
            let head = LineHead(framer.oversizeHead[...])
            let what = head.kind == .response ? "an answer" : head.kind == .request ? "a request" : "a line"
            let named = head.id.map { " (\(what) with id \($0))" } ?? ""
            let error = ResponseError(
                .limitExceeded,
                "line \(lineNumber)\(named) is longer than the limit of \(framer.maxLineLength) bytes (\(length)+ bytes)",
                data: [
                    "line": .int(Int64(lineNumber)), "limit": .int(Int64(framer.maxLineLength)), "field": "line",
                    "bytes": .int(Int64(length)),
                ])
            var violation = ProtocolViolation(
                error: error, lineNumber: lineNumber, requestID: head.kind == .request ? head.id : nil)
            if head.kind == .response { violation.answerID = head.id }
            return .violation(violation)
        case .line(let bytes, let lineNumber):
            if LineRules.isBlank(bytes) { return nil }
            return Self.decodeLine(bytes, lineNumber: lineNumber, maxDepth: maxDepth)
        }
    }

    /// Parses and classifies one line (without its terminator).
    public static func decodeLine(
        _ bytes: ArraySlice<UInt8>, lineNumber: Int, maxDepth: Int = JSONParser.defaultMaxDepth
    )
        -> Event
    {
        if let answer = answer(bytes, maxDepth: maxDepth) { return .message(answer, lineNumber: lineNumber) }
        return decodeGenerally(bytes, lineNumber: lineNumber, maxDepth: maxDepth)
    }

    private static let answerHead: [UInt8] = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    private static let resultKey: [UInt8] = Array(#","result":"#.utf8)

    /// The byte path of the line a host reads most: an answer in the shape every SDK writes,
    /// `{"jsonrpc":"2.0","id":N,"result":VALUE}` with a plain non-negative integer id. Only `VALUE` is parsed (no
    /// envelope object, no key lookups): about a quarter of the host's work per `$/ping`. Anything else, and any
    /// doubt (a string id, other key order, a key after `result`, spaces in the envelope), is nil and goes through
    /// ``decodeGenerally(_:lineNumber:maxDepth:)``, so a line is never taken differently (MessageTests pins it).
    package static func answer(_ bytes: ArraySlice<UInt8>, maxDepth: Int) -> Message? {
        guard let parts = answerParts(bytes) else { return nil }
        return response(bytes, id: parts.id, result: parts.result, maxDepth: maxDepth)
    }

    /// The answer whose result is `line[result]`, parsed alone, or nil when it does not parse there.
    private static func response(
        _ line: ArraySlice<UInt8>, id: Int64, result: Range<Int>, maxDepth: Int
    ) -> Message? {
        // The value alone, one level shallower than inside the envelope, so the depth limit bites where it would.
        guard maxDepth > 1, let value = try? JSONParser.parse(line[result], maxDepth: maxDepth - 1) else { return nil }
        return .response(id: .number(id), result: value)
    }

    /// The id and the result value's bytes of an answer in the shape ``answer(_:maxDepth:)`` takes, or nil.
    private static func answerParts(_ bytes: ArraySlice<UInt8>) -> (id: Int64, result: Range<Int>)? {
        // On spans: indexing an ArraySlice re-checks its bounds against the slice's own, which made this scan of
        // some 40 bytes cost about 450 instructions.
        let span = bytes.span
        let head = answerHead.span
        let key = resultKey.span
        guard span.count > head.count + key.count + 2, span[span.count - 1] == UInt8(ascii: "}"),
            Self.has(head, in: span, at: 0)
        else { return nil }
        var index = head.count
        let digits = index
        var id: Int64 = 0
        while index < span.count, index - digits < 18 {
            let digit = span[index] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            id = id * 10 + Int64(digit)
            index += 1
        }
        // No digits, a leading zero (not JSON), or more than 18 digits: the general path says what is wrong.
        guard index > digits, span[digits] != UInt8(ascii: "0") || index == digits + 1,
            Self.has(key, in: span, at: index)
        else { return nil }
        return (id, (bytes.startIndex + index + key.count)..<(bytes.endIndex - 1))
    }

    /// Whether `literal` is in `span` at `index`: an index loop, where the generic `starts(with:)` cost about 500
    /// instructions a line, a third of this whole path.
    @inline(__always)
    private static func has(_ literal: Span<UInt8>, in span: Span<UInt8>, at index: Int) -> Bool {
        guard span.count - index >= literal.count else { return false }
        var offset = 0
        while offset < literal.count {
            if span[index + offset] != literal[offset] { return false }
            offset += 1
        }
        return true
    }

    /// The general path: the whole line parsed to a tree, then classified (``Message/decode(_:)``).
    package static func decodeGenerally(
        _ bytes: ArraySlice<UInt8>, lineNumber: Int, maxDepth: Int = JSONParser.defaultMaxDepth
    ) -> Event {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maxDepth: maxDepth)
        } catch {
            let data: JSONObject = [
                "line": .int(Int64(lineNumber)), "offset": .int(Int64(error.offset)),
                "excerpt": .string(excerpt(bytes)),
            ]
            let response = ResponseError(
                .parseError, "line \(lineNumber) is not valid JSON: \(error)", data: .object(data))
            return .violation(ProtocolViolation(error: response, lineNumber: lineNumber, requestID: nil))
        }
        switch Message.decode(value) {
        case .success(let message):
            return .message(message, lineNumber: lineNumber)
        case .failure(let failure):
            let response = failure.error
                .adding("line", .int(Int64(lineNumber)))
                .adding("excerpt", .string(excerpt(bytes)))
            let located = ResponseError(response.code, "line \(lineNumber): \(response.message)", data: response.data)
            return .violation(ProtocolViolation(error: located, lineNumber: lineNumber, requestID: failure.id))
        }
    }

    /// At most 120 bytes of a line, lossily decoded, for error messages.
    public static func excerpt(_ bytes: ArraySlice<UInt8>) -> String {
        let prefix = bytes.prefix(120)
        let text = String(decoding: prefix, as: UTF8.self)
        return bytes.count > 120 ? text + "…" : text
    }
}
