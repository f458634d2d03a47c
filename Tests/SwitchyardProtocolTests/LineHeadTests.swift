import SwitchyardProtocol
import Testing

/// The head of a line over the length limit still names its message, so the request it answers fails at once.
@Suite(.timeLimit(.minutes(1)))
struct LineHeadTests {
    private func head(_ text: String) -> LineHead { LineHead(Array(text.utf8)[...]) }

    @Test("an answer's id before its result, as every SDK writes it")
    func answers() {
        #expect(
            head(#"{"jsonrpc":"2.0","id":42,"result":{"content":{"screen":"#)
                == LineHead(id: .number(42), kind: .response))
        #expect(
            head(#" { "jsonrpc" : "2.0" , "id" : "hb-3" , "error" : {"#)
                == LineHead(id: .string("hb-3"), kind: .response))
        #expect(head(#"{"id":-7,"jsonrpc":"2.0","result":"#) == LineHead(id: .number(-7), kind: .response))
    }

    @Test("a request's id, whichever side of its method")
    func requests() {
        #expect(
            head(#"{"jsonrpc":"2.0","id":3,"method":"navigate","params":{"steps":[{"#)
                == LineHead(id: .number(3), kind: .request))
        #expect(head(#"{"method":"navigate","id":"x","params":"#) == LineHead(id: .string("x"), kind: .request))
    }

    @Test("nothing is named unless the head shows it whole")
    func incomplete() {
        // The id after the bulk, a number cut at the end of the head, a nested value that does not end.
        #expect(head(#"{"jsonrpc":"2.0","result":{"a":1},"id":4}"#) == LineHead(id: nil, kind: .response))
        #expect(head(#"{"jsonrpc":"2.0","id":12"#).id == nil)
        #expect(head(#"{"x":{"y":["#) == LineHead(id: nil, kind: .unknown))
        #expect(head("xxxxxxxx") == LineHead(id: nil, kind: .unknown))
        // Members before the id are skipped whatever they hold: strings with escapes, nested values.
        #expect(head(#"{"a":"q\"}","b":[1,{"c":"]"}],"id":5,"result":"#) == LineHead(id: .number(5), kind: .response))
    }

    @Test("the message reader names an oversize answer's id, and an oversize request's")
    func reader() {
        var reader = MessageReader(maxLineLength: 64)
        reader.append(Array(#"{"jsonrpc":"2.0","id":9,"result":{"blob":""#.utf8) + Array(repeating: 0x78, count: 100))
        guard case .violation(let violation)? = reader.next() else {
            Issue.record("no violation")
            return
        }
        #expect(violation.answerID == .number(9))
        #expect(violation.requestID == nil)
        #expect(violation.error.message.contains("an answer with id 9"))
        reader.append(Array("\n".utf8) + Array(#"{"jsonrpc":"2.0","id":10,"method":"navigate","params":""#.utf8))
        reader.append(Array(repeating: 0x78, count: 100) + Array("\"}\n".utf8))
        guard case .violation(let request)? = reader.next() else {
            Issue.record("no violation for the request")
            return
        }
        #expect(request.requestID == .number(10))
        #expect(request.answerID == nil)
    }
}
