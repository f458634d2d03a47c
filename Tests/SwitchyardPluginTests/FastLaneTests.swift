@_spi(Testing) import SwitchyardPlugin
import SwitchyardProtocol
import Testing

/// The runtime answers `$/ping` and `coordinator/route` lines in the host's shape on a fast lane (no `JSONValue`
/// tree, no envelope, no endpoint). Every line here goes through a runtime with the lane and one without, after the
/// same handshake and creations: the answers must be the same bytes, whether the lane took the line or left it to
/// the general path (an error, an odd shape, a guard, a state change).
@Suite("Swift SDK: the request fast lane answers exactly as the general path", .timeLimit(.minutes(1)))
struct FastLaneTests {
    /// What a runtime wrote, line by line, for `lines` after the handshake and two instances (a shop, a cart).
    static func answers(_ lines: [String], fastLane: Bool) -> [String] {
        let (_, runtime) = Plugin("shop", coordinators: [ShopCoordinator.self, CartCoordinator.self]).makeServer()
        runtime.fastLaneEnabled = fastLane
        let written = Written()
        runtime.connectInProcess { written.lines.append(String(decoding: $0, as: UTF8.self)) }
        let setup = [
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":[1],"host":{"name":"t","version":"0"},"pluginName":"shop","limits":{"maxLineBytes":1048576,"maxMessagesPerSecond":1000,"maxOutstandingRequests":64,"maxInstances":100,"maxStderrBytesPerSecond":65536,"requestTimeoutMs":5000,"heartbeatIntervalMs":5000,"heartbeatTimeoutMs":5000,"maxProtocolErrors":20}}}"#,
            #"{"jsonrpc":"2.0","method":"initialized"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"coordinator/create","params":{"instance":1,"type":"shop","reason":"new"}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"coordinator/create","params":{"instance":2,"type":"cart","reason":"new"}}"#,
        ]
        for line in setup + lines { runtime.handleLine(line) }
        return written.lines
    }

    final class Written {
        var lines: [String] = []
    }

    static func expectSame(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = answers(lines, fastLane: true), general = answers(lines, fastLane: false)
        #expect(fast.count == general.count, sourceLocation: sourceLocation)
        for (index, (one, other)) in zip(fast, general).enumerated() {
            #expect(one == other, "answer \(index) to \(lines)", sourceLocation: sourceLocation)
        }
    }

    nonisolated static let route =
        #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"42"}}}"#

    @Test("the shapes the lane takes are answered, the state after each route included")
    func answered() {
        let lines = [Self.route, Self.route, #"{"jsonrpc":"2.0","id":"hb-1","method":"$/ping","params":{}}"#]
        let fast = Array(Self.answers(lines, fastLane: true).suffix(3))
        let expected: [String] = [
            #"{"jsonrpc":"2.0","id":9,"result":{"content":{"screen":{"name":"Item","props":{"id":"42"}}},"state":{"visits":1}}}"#
                + "\n",
            #"{"jsonrpc":"2.0","id":9,"result":{"content":{"screen":{"name":"Item","props":{"id":"42"}}},"state":{"visits":2}}}"#
                + "\n",
            #"{"jsonrpc":"2.0","id":"hb-1","result":{}}"# + "\n",
        ]
        #expect(fast == expected)
        Self.expectSame(lines)
    }

    @Test(
        "pings: ids, params and layouts of every kind",
        arguments: [
            #"{"jsonrpc":"2.0","id":7,"method":"$/ping","params":{}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"$/ping","params":null}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"$/ping","params":[]}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"$/ping","params":[1]}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"$/ping","params":{"x":1}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"$/ping","params":"no"}"#,
            #" { "params" : { } , "method" : "$/ping" ,\#t"id" : -5 , "jsonrpc" : "2.0" } "#,
            #"{"jsonrpc":"2.0","id":0,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":-0,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":007,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":1.0,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":1e3,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":123456789012345678,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":1234567890123456789,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":"a b","method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":"a\"b","method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":"é","method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":null,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":true,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":1,"id":2,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"$/ping","extra":{"a":[1]}}"#,
            #"{"jsonrpc":"1.0","id":1,"method":"$/ping"}"#,
            #"{"id":1,"method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","method":"$/ping"}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"$/pinG"}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"$\/ping"}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"$/ping""#,
            #"{"jsonrpc":"2.0","id":1,"method":"$/ping"}x"#,
            #"{"jsonrpc":"2.0","id":1,"method":"$/ping",}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"$/ping","result":{}}"#,
        ])
    func pings(_ line: String) {
        Self.expectSame([line])
    }

    @Test(
        "routes: inputs, errors, guards, other outputs and layouts",
        arguments: [
            route,
            #"{"params":{"params":{"id":"7"},"transition":"push","route":"item","type":"shop","instance":1},"method":"coordinator/route","id":"r","jsonrpc":"2.0"}"#,
            #"{ "jsonrpc" : "2.0" , "id" : 9 , "method" : "coordinator/route" , "params" : { "instance" : 1 , "type" : "shop" , "route" : "item" , "transition" : "push" , "params" : { "id" : "42" } } }"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"0"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"lost"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":42}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"4\"2"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"é","id":"x"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":{"a":1}}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":null}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push"}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"search","transition":"fullScreen","params":{"text":"socks","limit":5,"sort":null}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"search","transition":"fullScreen","params":{"text":"socks","limit":true}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"cart","transition":"modal"}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"profile","transition":"push"}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"home","transition":"root"}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":2,"type":"cart","route":"list","transition":"root"}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":2,"type":"shop","route":"item","transition":"push","params":{"id":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":3,"type":"shop","route":"item","transition":"push","params":{"id":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"nowhere","transition":"push"}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"nope","route":"item","transition":"push"}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"sideways","params":{"id":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","params":{"id":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":"1","type":"shop","route":"item","transition":"push","params":{"id":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1.0,"type":"shop","route":"item","transition":"push","params":{"id":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"1"},"link":null}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"1"},"link":{"url":"switchyard://shop/item/1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"1"},"other":1}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{"instance":1,"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":[1]}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route","params":{}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"coordinator/route"}"#,
            #"{"jsonrpc":"2.0","method":"coordinator/route","params":{"instance":1,"type":"shop","route":"item","transition":"push","params":{"id":"1"}}}"#,
        ])
    func routes(_ line: String) {
        // Twice: the second answer shows the state the first left.
        Self.expectSame([line, line])
    }

    @Test("a route handler registered by hand takes coordinator/route back from the lane")
    func handWritten() {
        let (_, runtime) = Plugin("shop", coordinators: [ShopCoordinator.self]).makeServer()
        runtime.onRequest(CoordinatorRouteRequest.method) { _ in .string("mine") }
        let written = Written()
        runtime.connectInProcess { written.lines.append(String(decoding: $0, as: UTF8.self)) }
        runtime.handleLine(Self.route)
        #expect(written.lines == [#"{"jsonrpc":"2.0","id":9,"result":"mine"}"# + "\n"])
    }
}
