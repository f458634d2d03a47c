import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

@Suite("JSON-RPC envelope", .timeLimit(.minutes(1)))
struct MessageTests {
    private func decode(_ text: String) throws -> Result<Message, EnvelopeError> {
        Message.decode(try JSONParser.parse(text))
    }

    @Test("requests, notifications, responses and error responses are told apart")
    func classification() throws {
        #expect(
            try decode(#"{"jsonrpc":"2.0","id":1,"method":"$/ping"}"#)
                == .success(.request(id: .number(1), method: "$/ping", params: nil)))
        #expect(
            try decode(#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}"#)
                == .success(.request(id: .string("a"), method: "m", params: ["x": 1])))
        #expect(
            try decode(#"{"jsonrpc":"2.0","method":"exit"}"#) == .success(.notification(method: "exit", params: nil)))
        #expect(
            try decode(#"{"jsonrpc":"2.0","id":7,"result":{}}"#) == .success(.response(id: .number(7), result: [:])))
        #expect(
            try decode(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#)
                == .success(.errorResponse(id: nil, error: ResponseError(.parseError, "bad"))))
    }

    @Test(
        "invalid envelopes name the field and keep the id when they can",
        arguments: [
            (#"[1]"#, nil as String?, nil as RequestID?),
            (#"{"id":1,"method":"m"}"#, "jsonrpc", .number(1)),
            (#"{"jsonrpc":"1.0","id":2,"method":"m"}"#, "jsonrpc", .number(2)),
            (#"{"jsonrpc":"2.0","id":3,"method":5}"#, "method", .number(3)),
            (#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#, "id", nil),
            (#"{"jsonrpc":"2.0","id":4,"method":"m","params":3}"#, "params", .number(4)),
            (#"{"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1,"message":"x"}}"#, "result", .number(5)),
            (#"{"jsonrpc":"2.0","result":1}"#, "id", nil),
            (#"{"jsonrpc":"2.0","id":6}"#, "method", .number(6)),
        ])
    func invalid(_ text: String, field: String?, id: RequestID?) throws {
        guard case .failure(let failure) = try decode(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(failure.error.code == .invalidRequest)
        #expect(failure.field == field)
        #expect(failure.id == id)
    }

    @Test("encoding writes one compact line with jsonrpc first")
    func encoding() {
        let line = Message.request(id: .number(12), method: "$/ping", params: [:]).encodedLine()
        #expect(
            String(decoding: line, as: UTF8.self)
                == "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"$/ping\",\"params\":{}}\n")
        let error = Message.errorResponse(id: nil, error: ResponseError(.parseError, "x")).encodedLine()
        #expect(
            String(decoding: error, as: UTF8.self)
                == "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}\n")
    }
}

@Suite("Typed coding", .timeLimit(.minutes(1)))
struct CodingTests {
    @Test("initialize params and result pin their JSON")
    func initialize() throws {
        try checkCoding(
            InitializeRequest.Params(
                protocolVersions: [1], host: PluginInfo(name: "switchyard", version: "0.1.0"),
                pluginName: "todos",
                limits: PluginLimits(
                    maxLineBytes: 1024, maxMessagesPerSecond: 10, maxOutstandingRequests: 2, maxInstances: 3,
                    maxStderrBytesPerSecond: 4, requestTimeoutMs: 5)),
            json:
                #"{"protocolVersions":[1],"host":{"name":"switchyard","version":"0.1.0"},"pluginName":"todos","limits":{"maxLineBytes":1024,"maxMessagesPerSecond":10,"maxOutstandingRequests":2,"maxInstances":3,"maxStderrBytesPerSecond":4,"requestTimeoutMs":5,"heartbeatIntervalMs":1000,"heartbeatTimeoutMs":2000,"maxProtocolErrors":20}}"#
        )
        try checkCoding(
            InitializeRequest.Result(
                protocolVersion: 1, plugin: PluginInfo(name: "todos", version: "1.0"),
                coordinators: [
                    CoordinatorDeclaration(
                        type: "todos", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(
                                name: "todo", transition: .push, deepLink: "todo/:id",
                                params: [ParamDeclaration(name: "id", type: .string)]),
                            RouteDeclaration(
                                name: "project", transition: .modal,
                                target: CoordinatorReference(plugin: "projects", type: "projects")),
                        ])
                ]),
            json:
                #"{"protocolVersion":1,"plugin":{"name":"todos","version":"1.0"},"coordinators":[{"type":"todos","kind":"stack","initialRoute":"list","routes":[{"name":"list","transition":"root"},{"name":"todo","transition":"push","deepLink":"todo/:id","params":[{"name":"id","type":"string"}]},{"name":"project","transition":"modal","target":{"plugin":"projects","type":"projects"}}]}]}"#
        )
    }

    @Test("a decoding error names the field by its dotted path")
    func fieldPaths() throws {
        let bad = try JSONParser.parse(
            #"{"protocolVersion":1,"plugin":{"name":"x","version":"1"},"coordinators":[{"type":"t","kind":"stack","routes":[{"name":"a","transition":"sideways"}]}]}"#
        )
        do {
            _ = try Coding.decode(InitializeRequest.Result.self, from: bad)
            Issue.record("decoded an unknown transition")
        } catch {
            let error = ResponseError.invalidParams(method: "initialize", error)
            #expect(error.data?["field"] == "coordinators[0].routes[0].transition")
        }
        let missing = try JSONParser.parse(#"{"protocolVersion":1,"coordinators":[]}"#)
        do {
            _ = try Coding.decode(InitializeRequest.Result.self, from: missing)
            Issue.record("decoded without plugin")
        } catch {
            #expect(describeDecodingError(error).field == "plugin")
        }
    }

    @Test("Empty decodes from absence, null and {}")
    func empty() throws {
        #expect(try Coding.decode(Empty.self, from: nil) == Empty())
        #expect(try Coding.decode(Empty.self, from: .null) == Empty())
        #expect(try Coding.encode(Empty()) == [:])
    }

    @Test(
        "an answer in the SDKs' shape is read by its byte path exactly as the general path reads it; anything else is left to the general path"
    )
    func answerBytePath() {
        let taken = [
            #"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            #"{"jsonrpc":"2.0","id":0,"result":null}"#,
            #"{"jsonrpc":"2.0","id":123456789012345678,"result":[1,2.5,"x",true]}"#,
            #"{"jsonrpc":"2.0","id":42,"result":{"content":{"screen":{"name":"Item","props":{"id":"42"}}},"state":{"opened":3}}}"#,
            #"{"jsonrpc":"2.0","id":3,"result": {"a":"\u00e9\n","a":2} }"#,
            // The depth limit (8 here) counts the envelope: seven levels of result fit.
            #"{"jsonrpc":"2.0","id":9,"result":[[[[[[[1]]]]]]]}"#,
        ]
        let left = [
            #"{"jsonrpc":"2.0","id":"s","result":{}}"#,
            #"{"jsonrpc":"2.0","id":-1,"result":{}}"#,
            #"{"jsonrpc":"2.0","id":05,"result":{}}"#,
            #"{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}"#,
            #"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            #"{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":"m"}}"#,
            #"{"jsonrpc":"2.0","id":4,"result":{},"x":1}"#,
            #"{"jsonrpc":"2.0","id":4,"result":}"#,
            #"{"jsonrpc":"2.0","id":4,"result":{}} "#,
            #"{"jsonrpc": "2.0","id":4,"result":{}}"#,
            #"{"id":4,"jsonrpc":"2.0","result":{}}"#,
            #"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"m"}}"#,
            #"{"jsonrpc":"2.0","id":9,"result":[[[[[[[[1]]]]]]]]}"#,
            #"{"jsonrpc":"2.0","id":4,"result":{"a":}}"#,
            // What only the parser's refusal of trailing bytes keeps out.
            #"{"jsonrpc":"2.0","id":4,"result":{"a":1}"#,
            #"{"jsonrpc":"2.0","id":4,"result":1}}"#,
            #"{"jsonrpc":"2.0","id":4,"result":1,"result":2}"#,
            "\u{FEFF}" + #"{"jsonrpc":"2.0","id":4,"result":{}}"#,
            #"{"jsonrpc":"2.0","id":4,"result":{}}"# + "\r",
        ]
        for line in taken + left {
            let bytes = Array(line.utf8)[...]
            let general = MessageReader.decodeGenerally(bytes, lineNumber: 3, maxDepth: 8)
            #expect(MessageReader.decodeLine(bytes, lineNumber: 3, maxDepth: 8) == general, "\(line)")
            let byBytes = MessageReader.answer(bytes, maxDepth: 8)
            #expect((byBytes != nil) == taken.contains(line), "\(line)")
            if let byBytes { #expect(general == .message(byBytes, lineNumber: 3), "\(line)") }
        }
        // The default depth, and a limit that leaves no room for a result inside the envelope.
        for line in taken {
            let bytes = Array(line.utf8)[...]
            #expect(
                MessageReader.decodeLine(bytes, lineNumber: 1) == MessageReader.decodeGenerally(bytes, lineNumber: 1))
            #expect(MessageReader.answer(bytes, maxDepth: 1) == nil)
            #expect(
                MessageReader.decodeLine(bytes, lineNumber: 1, maxDepth: 1)
                    == MessageReader.decodeGenerally(bytes, lineNumber: 1, maxDepth: 1))
        }

        // nextKeepingAnswers hands over, unparsed, exactly the lines the byte path takes (and those that would fail
        // to parse there too); decodeAnswer then reads each as next() does, and every other line is next()'s event.
        for depth in [1, 8] {
            let stream = Array((taken + left).joined(separator: "\n").utf8) + [0x0A]
            var plain = MessageReader(maxLineLength: 1 << 16, maxDepth: depth)
            var keeping = MessageReader(maxLineLength: 1 << 16, maxDepth: depth)
            plain.append(stream)
            keeping.append(stream)
            var kept: [String] = []
            while let expected = plain.next() {
                switch keeping.nextKeepingAnswers() {
                case .event(let event)?:
                    #expect(event == expected)
                case .answer(let id, let line, let result, let lineNumber)?:
                    kept.append(String(decoding: line, as: UTF8.self))
                    let read = MessageReader.decodeAnswer(
                        line, id: id, result: result, lineNumber: lineNumber, maxDepth: depth)
                    #expect(read == expected, "\(String(decoding: line, as: UTF8.self))")
                case nil:
                    Issue.record("nextKeepingAnswers ended before next()")
                }
            }
            #expect(keeping.nextKeepingAnswers() == nil)
            #expect(taken.allSatisfy(kept.contains), "every line the byte path takes is kept")
        }
    }
}
