import SwitchyardProtocol
import Testing

/// Diagnostics name a field's line and column: `JSONParser.locate` finds a path in the text the parser accepted,
/// and `TextPosition` turns a byte offset into what an editor shows.
@Suite("JSON locations for diagnostics", .timeLimit(.minutes(1)))
struct JSONLocationTests {
    static let text = Array(
        """
        {
          "app": "demo",
          "plugins": [
            {"name": "a\\"b", "args": ["x", {"k": [1, 2]}]},
            {"name": "é", "name": "last", "command": ["python3"]}
          ]
        }
        """.utf8)

    static func position(_ path: [JSONPathComponent], key: Bool = false) -> String? {
        guard let found = JSONParser.locate(path, in: text) else { return nil }
        return TextPosition(offset: key ? found.key ?? -1 : found.value, in: text).description
    }

    @Test("keys and values, through arrays and nested objects, past strings holding quotes and brackets")
    func paths() {
        #expect(Self.position([.key("app")]) == "2:10")
        #expect(Self.position([.key("app")], key: true) == "2:3")
        #expect(Self.position([.key("plugins"), .index(0), .key("name")]) == "4:14")
        #expect(Self.position([.key("plugins"), .index(0), .key("args"), .index(1), .key("k"), .index(1)]) == "4:46")
        #expect(Self.position([.key("plugins"), .index(1), .key("command")], key: true) == "5:35")
        // A key given twice is found where the parser takes its value from: the last one.
        #expect(Self.position([.key("plugins"), .index(1), .key("name")]) == "5:27")
        #expect(Self.position([.key("plugins"), .index(2)]) == nil)
        #expect(Self.position([.key("nope")]) == nil)
        #expect(Self.position([.index(0)]) == nil)
    }

    @Test("a position counts characters, not bytes, and its excerpt puts the caret under the spot (tabs kept)")
    func positions() {
        let bytes = Array("{\r\n\t\"é\": x}".utf8)
        let position = TextPosition(offset: bytes.firstIndex(of: UInt8(ascii: "x")) ?? 0, in: bytes)
        #expect(position.line == 2)
        #expect(position.column == 7)
        #expect(position.excerpt == "\t\"é\": x}\n\t     ^")
        #expect(TextPosition(offset: 10_000, in: bytes).line == 2)
    }

    @Test("a parse error's position is its line and column")
    func parseError() {
        let bytes = Array("{\n  \"a\": [1,]\n}".utf8)
        do {
            _ = try JSONParser.parse(bytes)
            Issue.record("accepted")
        } catch {
            #expect(TextPosition(offset: error.offset, in: bytes).description == "2:11")
            #expect(error.reasonDescription == "unexpected character ']'")
        }
    }
}
