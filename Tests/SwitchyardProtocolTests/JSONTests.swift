import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

@Suite("JSON parser and writer", .timeLimit(.minutes(1)))
struct JSONTests {
    @Test(
        "strict where Linux Foundation is lenient",
        arguments: [
            "[1,]", "{\"a\":1,}", "01", "[.5]", "+1", "\"\t\"", "[1 2]", "tru", "nul", "\"\\x\"", "\"\\uD800\"", "1e",
            "-", "[\"a\"]x",
        ])
    func rejects(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test("numbers keep integers exact and parse doubles per RFC 8259")
    func numbers() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .int(Int64.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .int(Int64.min))
        #expect(try JSONParser.parse("123456789012345678") == .int(123_456_789_012_345_678))
        #expect(try JSONParser.parse("1.5e3") == .double(1500))
        #expect(try JSONParser.parse("-0") == .int(0))
    }

    @Test("out-of-range numbers are an error, not infinity")
    func outOfRange() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse("1E400") }
    }

    @Test("escapes and surrogate pairs decode; output escapes what JSON requires and nothing else")
    func strings() throws {
        let value = try JSONParser.parse(#""a\"b\\c\/d\n\u00e9\uD83D\uDE00 \u0001""#)
        #expect(value == .string("a\"b\\c/d\né😀 \u{01}"))
        #expect(JSONWriter.string(value) == #""a\"b\\c/d\né😀 \u0001""#)
    }

    @Test("writing then parsing round-trips, and object key order is kept")
    func roundTrip() throws {
        let value: JSONValue = ["z": 1, "a": [true, false, nil, 1.25, "x"], "m": ["nested": [:]]]
        let text = JSONWriter.string(value)
        #expect(text == #"{"z":1,"a":[true,false,null,1.25,"x"],"m":{"nested":{}}}"#)
        #expect(try JSONParser.parse(text) == value)
    }

    @Test("objects compare equal regardless of key order; duplicate keys keep the last value")
    func objects() throws {
        #expect(try JSONParser.parse(#"{"a":1,"b":2}"#) == JSONParser.parse(#"{"b":2,"a":1}"#))
        #expect(try JSONParser.parse(#"{"a":1,"a":2}"#) == ["a": 2])
        #expect(JSONValue.int(1) == JSONValue.double(1.0))
    }

    @Test("an object with many duplicate keys parses in linear time")
    func manyKeys() throws {
        var text = "{"
        for index in 0..<50_000 { text += "\"k\(index % 1_000)\":\(index)," }
        text += "\"end\":0}"
        let value = try JSONParser.parse(text)
        #expect(value.objectValue?.count == 1_001)
        #expect(value["k999"] == .int(49_999))
    }

    @Test("integers are written exactly at every magnitude and sign")
    func integers() {
        for number: Int64 in [
            0, 7, 9, 10, -1, -9, -10, 99, 100, 123_456, -98_765, 1_000_000_000_000, Int64.max, Int64.min,
        ] {
            #expect(JSONWriter.string(.int(number)) == String(number))
        }
    }

    @Test(
        "member names the protocol uses and near misses parse alike, escaped or not; errors in names keep their offsets"
    )
    func memberNames() throws {
        let value = try JSONParser.parse(
            #"{"jsonrpc":1,"idx":2,"i":3,"j\u0073onrpc2":4,"méthod":5,"":6,"id":7,"instances":8,"Id":9}"#)
        #expect(value.objectValue?.keys == ["jsonrpc", "idx", "i", "jsonrpc2", "méthod", "", "id", "instances", "Id"])
        #expect(try JSONParser.parse(#"{"j\u0073onrpc":"2.0"}"#) == ["jsonrpc": "2.0"])
        // The names the parser knows (KnownKeys) and a few near misses: each parses to itself, wherever it stands.
        let names = [
            "jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data", "instance", "type",
            "route",
            "transition", "reason", "content", "screen", "name", "props", "state", "root", "plugin", "line", "field",
            "limit", "level", "protocolVersion", "coordinators", "version", "steps", "tabs", "presentation", "children",
            "title", "parent", "revision", "instances", "protocolVersions", "protocolVersio", "ids", "d", "i!d", "~",
        ]
        for name in names {
            #expect(try JSONParser.parse("{\"\(name)\":1,\"x\":{\"\(name)\":[]}}").objectValue?.keys == [name, "x"])
        }
        #expect(throws: JSONParseError(.controlCharacterInString, at: 4)) { try JSONParser.parse("{\"id\u{01}\":1}") }
        #expect(throws: JSONParseError(.unexpectedEnd, at: 4)) { try JSONParser.parse("{\"id") }
        #expect(throws: JSONParseError(.unexpectedByte(UInt8(ascii: "}")), at: 5)) { try JSONParser.parse(#"{"id"}"#) }
    }
}
