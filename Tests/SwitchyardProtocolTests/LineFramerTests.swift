import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

@Suite("LineFramer", .timeLimit(.minutes(1)))
struct LineFramerTests {
    let stream = Array("{\"a\":1}\n\r\n[2]\r\nxyz\n".utf8)
    let expected: [FramedLine] = [.line("{\"a\":1}", 1), .line("", 2), .line("[2]", 3), .line("xyz", 4)]

    @Test("lines split at every byte boundary frame the same as one read")
    func everySplit() {
        for chunks in splits(of: stream) {
            let framed = frameAll(chunks, maxLineLength: 64).map(FramedLine.init)
            #expect(framed == expected, "chunks \(chunks.map(\.count))")
        }
    }

    @Test("10,000 lines in one read")
    func manyLinesOneRead() {
        var bytes: [UInt8] = []
        for index in 0..<10_000 {
            bytes += Array("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"i\":\(index)}}\n".utf8)
        }
        let events = readAll([bytes])
        #expect(events.count == 10_000)
        guard case .message(.notification(_, let params), 10_000) = events.last else {
            Issue.record("last event: \(String(describing: events.last))")
            return
        }
        #expect(params?["i"] == .int(9_999))
    }

    @Test("CRLF and LF terminate lines alike, and the carriage return is dropped")
    func crlf() {
        let framed = frameAll([Array("a\r\nb\nc\r\n".utf8)], maxLineLength: 8).map(FramedLine.init)
        #expect(framed == [.line("a", 1), .line("b", 2), .line("c", 3)])
    }

    @Test("a line of exactly the limit passes; one byte over is rejected, and framing resumes after it")
    func limit() {
        let limit = 16
        let exact = [UInt8](repeating: UInt8(ascii: "x"), count: limit)
        let over = [UInt8](repeating: UInt8(ascii: "y"), count: limit + 1)
        let bytes = exact + [0x0A] + over + [0x0A] + Array("ok\n".utf8)
        for chunks in splits(of: bytes) {
            let framed = frameAll(chunks, maxLineLength: limit).map(FramedLine.init)
            #expect(
                framed == [.line(String(repeating: "x", count: limit), 1), .tooLong(2), .line("ok", 3)],
                "chunks \(chunks.map(\.count))")
        }
        // With CRLF the limit counts the content only.
        let crlf = frameAll([exact + [0x0D, 0x0A]], maxLineLength: limit).map(FramedLine.init)
        #expect(crlf == [.line(String(repeating: "x", count: limit), 1)])
    }

    @Test("an endless line without a newline keeps memory bounded and is reported once")
    func unboundedLine() {
        var framer = LineFramer(maxLineLength: 1_000)
        var errors = 0
        for _ in 0..<1_000 {
            framer.append([UInt8](repeating: 0x41, count: 4_096))
            while let event = framer.next() {
                if case .lineTooLong = event { errors += 1 }
            }
            #expect(framer.pendingByteCount <= 1_000 + 4_096)
        }
        framer.append(Array("\n{}\n".utf8))
        var after: [FramedLine] = []
        while let event = framer.next() { after.append(FramedLine(event)) }
        #expect(errors == 1)
        #expect(after == [.line("{}", 2)])
    }

    @Test("invalid UTF-8 inside a string is a parse error naming the line; the next line still reads")
    func invalidUTF8() {
        let bytes: [UInt8] =
            Array("{\"jsonrpc\":\"2.0\",\"method\":\"".utf8) + [0xC3, 0x28] + Array("\"}\n".utf8)
            + Array("{\"jsonrpc\":\"2.0\",\"method\":\"ok\"}\n".utf8)
        let events = readAll([bytes])
        guard case .violation(let violation) = events.first else {
            Issue.record("expected a violation, got \(events)")
            return
        }
        #expect(violation.error.code == .parseError)
        #expect(violation.lineNumber == 1)
        #expect(violation.error.message.contains("invalid UTF-8"))
        #expect(events.last == .message(.notification(method: "ok", params: nil), lineNumber: 2))
    }

    @Test("invalid JSON is a parse error with the line number, offset and an excerpt")
    func invalidJSON() {
        let events = readAll([Array("{\"jsonrpc\":\"2.0\",}\n".utf8)])
        guard case .violation(let violation) = events.first else {
            Issue.record("expected a violation, got \(events)")
            return
        }
        #expect(violation.error.code == .parseError)
        #expect(violation.error.data?["line"] == .int(1))
        #expect(violation.error.data?["offset"] == .int(17))
        #expect(violation.error.data?["excerpt"] == .string("{\"jsonrpc\":\"2.0\",}"))
    }

    @Test("an empty line is skipped, not an error")
    func emptyLine() {
        let events = readAll([Array("\n\r\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n".utf8)])
        #expect(events == [.message(.notification(method: "m", params: nil), lineNumber: 4)])
    }

    @Test("the unterminated last line at EOF is still delivered")
    func eofWithoutNewline() {
        let bytes = Array("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}".utf8)
        for chunks in splits(of: bytes) {
            let events = readAll(chunks)
            #expect(
                events == [
                    .message(.notification(method: "a", params: nil), lineNumber: 1),
                    .message(.notification(method: "b", params: nil), lineNumber: 2),
                ])
        }
    }
}
