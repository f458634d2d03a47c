import SwitchyardProtocol
import SwitchyardTestSupport
import SwitchyardSpec
import Testing

@Suite("Protocol trace records", .timeLimit(.minutes(1)))
struct TraceRecordTests {
    let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")

    @Test("timestamps are UTC ISO 8601 with milliseconds, leap days and instants before 1970 included")
    func timestamps() {
        #expect(TraceRecord.timestamp(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(TraceRecord.timestamp(milliseconds: 951_782_400_123) == "2000-02-29T00:00:00.123Z")
        #expect(TraceRecord.timestamp(milliseconds: 1_738_316_467_123) == "2025-01-31T09:41:07.123Z")
        #expect(TraceRecord.timestamp(milliseconds: 4_107_542_399_999) == "2100-02-28T23:59:59.999Z")
        #expect(TraceRecord.timestamp(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }

    @Test("the three record shapes decode as TraceRecord and validate against trace.event.json")
    func shapes() throws {
        let message = Message.request(id: .number(3), method: "coordinator/route", params: ["route": "todo"])
            .encodedLine().dropLast()
        let records = [
            TraceRecord.encode(milliseconds: 1_738_316_467_123, plugin: "todos", direction: .out, message: message),
            TraceRecord.encodeInvalid(
                milliseconds: 1, plugin: "todos", raw: Array("not json \"quoted\"".utf8)[...],
                error: ResponseError(.parseError, "line 2 is not valid JSON", data: ["line": 2])),
            TraceRecord.encodeInvalid(
                milliseconds: 1, plugin: "todos", raw: nil, error: ResponseError(.limitExceeded, "too long")),
            TraceRecord.encodeDropped(milliseconds: 1, count: 12),
        ]
        for bytes in records {
            let value = try JSONParser.parse(bytes)
            #expect(
                try validator.validate(value, against: "trace.event.json#/$defs/params") == [],
                "\(String(decoding: bytes, as: UTF8.self))")
            _ = try JSONValueDecoder().decode(TraceRecord.self, from: value)
        }
        let decoded = try JSONValueDecoder().decode(TraceRecord.self, from: JSONParser.parse(records[0]))
        #expect(
            decoded
                == TraceRecord(
                    time: "2025-01-31T09:41:07.123Z", plugin: "todos", direction: .out,
                    message: try JSONParser.parse(message)))
        #expect(
            try JSONValueDecoder().decode(TraceRecord.self, from: JSONParser.parse(records[1])).raw
                == "not json \"quoted\"")
        #expect(try JSONValueDecoder().decode(TraceRecord.self, from: JSONParser.parse(records[3])).dropped == 12)
        // Not vacuous: a record without its message, or with an unknown direction, is refused.
        #expect(
            try validator.validate(
                ["time": "2025-01-31T09:41:07.123Z", "plugin": "a", "direction": "out"],
                against: "trace.event.json#/$defs/params") != [])
        #expect(
            try validator.validate(
                ["time": "2025-01-31T09:41:07.123Z", "plugin": "a", "direction": "up", "message": [:]],
                against: "trace.event.json#/$defs/params") != [])
    }

    @Test("an error's author details: the traceback or stack, and the stderr lines unless they only repeat it")
    func authorDetails() {
        let plain = ResponseError(.routeNotFound, "no route 'x'", data: ["route": "x"])
        #expect(plain.authorDetails == nil)
        #expect(plain.descriptionWithDetails == plain.description)

        let failed = ResponseError(
            .internalError, "KeyError: 'idd'",
            data: [
                "plugin": "todos",
                "traceback": "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'idd'\n",
                "stderr": [
                    "todos: loading", "Traceback (most recent call last):", "  File \"x.py\", line 3",
                    "KeyError: 'idd'",
                ],
            ])
        // The SDKs write the traceback to stderr too: it is shown once, with what the plugin wrote before it.
        #expect(
            failed.authorDetails == """
                  traceback:
                    Traceback (most recent call last):
                      File "x.py", line 3
                    KeyError: 'idd'
                  stderr of plugin 'todos', last lines:
                    todos: loading
                """)
        let onlyTraceback = ResponseError(
            .internalError, "KeyError: 'idd'",
            data: [
                "traceback": "Traceback (most recent call last):\nKeyError: 'idd'\n", "stderr": ["KeyError: 'idd'"],
            ])
        #expect(
            onlyTraceback.authorDetails == "  traceback:\n    Traceback (most recent call last):\n    KeyError: 'idd'")

        let stack = ResponseError(
            .internalError, "TypeError: x is undefined",
            data: [
                "plugin": "projects", "stack": "TypeError: x is undefined\n    at route (projects.js:9:3)",
                "stderr": ["projects: routing"],
            ])
        #expect(
            stack.descriptionWithDetails == """
                internalError (-32603): TypeError: x is undefined
                  stack:
                    TypeError: x is undefined
                        at route (projects.js:9:3)
                  stderr of plugin 'projects', last lines:
                    projects: routing
                """)
    }
}
