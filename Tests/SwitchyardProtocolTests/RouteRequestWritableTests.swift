import SwitchyardProtocol
import Testing

/// What the host sends along the navigation path (``JSONWritable``) must be byte for byte what Codable writes:
/// `coordinator/route` with and without a deep link's context, `coordinator/destroy`, and the notifications a
/// committed chain sends; and the route and create answers read without Codable must be what Codable reads, leaving
/// to Codable (and its errors) everything it rejects.
@Suite("coordinator/route, destroy and the chain's notifications written directly", .timeLimit(.minutes(1)))
struct RouteRequestWritableTests {
    static let links: [DeepLinkContext] = [
        .init(url: "app://shop/item/7", segments: ["shop", "item", "7"], index: 1, query: [:]),
        .init(
            url: "app://a/b?x=1&y=%22q%22", segments: ["a", "b"], index: 0,
            query: ["x": "1", "y": "\"q\"", "é": "line\nbreak"]),
        .init(url: "", segments: [], index: 12, query: ["only": ""]),
    ]

    static let routes: [CoordinatorRouteRequest.Params] = [
        .init(instance: InstanceID(1), type: "shop", route: "item", transition: .push),
        .init(
            instance: InstanceID(22), type: "t\"ab", route: "r\u{1}", transition: .modal,
            params: ["id": 7, "s": "é", "d": 1.5, "a": [true, .null]]),
        .init(instance: InstanceID(3), type: "shop", route: "home", transition: .root, params: .null, link: links[0]),
        .init(instance: InstanceID(-4), type: "x", route: "y", transition: .fullScreen, link: links[1]),
        .init(instance: InstanceID(5), type: "x", route: "y", transition: .tab, params: "p", link: links[2]),
        .init(instance: InstanceID(6), type: "x", route: "y", transition: .child),
    ]

    static func codable<T: Encodable>(_ value: T) throws -> String { try CreateRequestWritableTests.codable(value) }

    static func written(_ value: some JSONWritable) -> String { CreateRequestWritableTests.written(value) }

    @Test("deep-link contexts: empty and filled segments and query, escapes", arguments: links)
    func sameLink(_ link: DeepLinkContext) throws {
        #expect(Self.written(link) == (try Self.codable(link)))
    }

    @Test("route params: every transition, params and link each present and absent", arguments: routes)
    func sameRoute(_ params: CoordinatorRouteRequest.Params) throws {
        #expect(Self.written(params) == (try Self.codable(params)))
    }

    @Test("destroy params")
    func sameDestroy() throws {
        for params in [
            CoordinatorDestroyRequest.Params(instance: InstanceID(9), type: "cart"),
            .init(instance: InstanceID(123456789), type: "\\"),
        ] {
            #expect(Self.written(params) == (try Self.codable(params)))
        }
    }

    @Test("dismissed, tabSelected and appeared params")
    func sameNotifications() throws {
        for reason in [CoordinatorDismissedNotification.Reason.user, .navigation] {
            let params = CoordinatorDismissedNotification.Params(
                instance: InstanceID(3), entry: EntryID(41), route: "de\"tail", reason: reason)
            #expect(Self.written(params) == (try Self.codable(params)))
        }
        for isRepeat in [true, false] {
            let params = CoordinatorTabSelectedNotification.Params(
                instance: InstanceID(2), tab: "home", isRepeat: isRepeat)
            #expect(Self.written(params) == (try Self.codable(params)))
        }
        let appeared = CoordinatorAppearedNotification.Params(instance: InstanceID(8), entry: EntryID(0))
        #expect(Self.written(appeared) == (try Self.codable(appeared)))
    }

    @Test("a notification line around encoded params is the notification's own line")
    func notificationLine() throws {
        let params = CoordinatorTabSelectedNotification.Params(instance: InstanceID(2), tab: "home", isRepeat: true)
        let line = Message.notificationLine(
            method: CoordinatorTabSelectedNotification.method, encodedParams: Array(Self.written(params).utf8))
        let expected = Message.notification(
            method: CoordinatorTabSelectedNotification.method, params: try Coding.encode(params)
        ).encodedLine()
        #expect(String(decoding: line, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    static let answers: [String] = [
        #"{"content":{"screen":{"name":"Item"}}}"#,
        #"{"content":{"screen":{"name":"Item","props":{"id":7,"d":1.5}},"coordinator":{"type":"ignored"}},"state":{"n":1},"extra":1}"#,
        #"{"content":{"screen":{"name":"Item","props":null}},"state":null}"#,
        #"{"content":{"screen":null,"coordinator":{"type":"cart"}}}"#,
        #"{"content":{"coordinator":{"plugin":"shop","type":"cart","params":{"n":[1,2]}}},"state":[true]}"#,
        #"{"content":{"coordinator":{"plugin":null,"type":"cart","params":null}}}"#,
        #"{"content":{"screen":{"name":"Todo","title":"Buy milk","content":[{"type":"text","text":"x"}]}}}"#,
        #"{"content":{"screen":{"name":"Todo","title":null,"content":null}}}"#,
    ]

    /// Each is read by Codable with an error; the direct reader must leave all of them to it.
    static let invalidAnswers: [String] = [
        #"[]"#, #"{}"#, #"{"content":null}"#, #"{"content":{}}"#, #"{"content":{"screen":1}}"#,
        #"{"content":{"screen":{}}}"#, #"{"content":{"screen":{"name":1}}}"#, #"{"content":{"coordinator":null}}"#,
        #"{"content":{"coordinator":{}}}"#, #"{"content":{"coordinator":{"type":"t","plugin":2}}}"#,
        #"{"content":{"screen":{"name":"Todo","title":7}}}"#,
    ]

    static func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    /// `text` is read directly, to what Codable reads.
    static func readAsCodable<T: Decodable & Equatable>(_ text: String, _ reading: (JSONValue) -> T?) throws {
        let value = try parse(text)
        let read = try #require(reading(value))
        #expect(read == (try Coding.decode(T.self, from: value)))
    }

    /// `text` is not read directly, and Codable rejects it (with the error the host reports).
    static func leftToCodable<T: Decodable & Equatable>(_ text: String, _ reading: (JSONValue) -> T?) throws {
        let value = try parse(text)
        #expect(reading(value) == nil)
        #expect(throws: (any Error).self) { try Coding.decode(T.self, from: value) }
    }

    @Test("route answers read directly are what Codable reads", arguments: answers)
    func sameAnswer(_ text: String) throws {
        try Self.readAsCodable(text, CoordinatorRouteRequest.Result.init(reading:))
    }

    @Test("a route answer Codable rejects is left to Codable, which names the field", arguments: invalidAnswers)
    func invalidAnswer(_ text: String) throws {
        try Self.leftToCodable(text, CoordinatorRouteRequest.Result.init(reading:))
        #expect(CoordinatorRouteRequest.Result(resultBytes: Array(text.utf8)[...], maxDepth: 64) == nil)
    }

    /// Route answers in the SDKs' shape: the byte reader takes each, to what Codable reads.
    static let answersInShape: [String] = [
        #"{"content":{"screen":{"name":"Item"}}}"#,
        #"{"content":{"screen":{"name":"Item","props":{"id":"42"}}},"state":{"opened":3}}"#,
        #"{"state":{"n":[1,2.5,null]},"content":{"screen":{"props":null,"name":"It\u00e9m \"x\""}}}"#,
        #"{"content":{"screen":{"name":"Item","props":null}},"state":null}"#,
        #"{"content":{"screen":{"name":"Todo","title":"Buy milk","content":[{"type":"text","text":"x"}]}}}"#,
        #"{"content":{"screen":{"name":"Todo","title":null,"content":null}}}"#,
        #"{"content":{"coordinator":{"plugin":"shop","type":"cart","params":{"n":[1,2]}}},"state":[true]}"#,
        #"{"content":{"coordinator":{"plugin":null,"type":"cart","params":null}}}"#,
        #"{"content":{"coordinator":{"type":"cart"}}}"#,
        #"{"content":{"screen":{"name":"Item","props":{"a":1,"a":2}}}}"#,
    ]

    @Test("route answers read from their bytes are what Codable and the tree reader read", arguments: answersInShape)
    func sameAnswerFromBytes(_ text: String) throws {
        let value = try Self.parse(text)
        let fromBytes = try #require(CoordinatorRouteRequest.Result(resultBytes: Array(text.utf8)[...], maxDepth: 64))
        #expect(fromBytes == (try Coding.decode(CoordinatorRouteRequest.Result.self, from: value)))
        #expect(fromBytes == CoordinatorRouteRequest.Result(reading: value))
    }

    /// Valid answers outside the byte reader's shape: it leaves each to the tree reader, which takes it.
    static let answersOutOfShape: [String] = [
        #"{ "content":{"screen":{"name":"Item"}}}"#,
        #"{"content":{"screen":{"name":"Item"}}} "#,
        #"{"content":{"screen":{"name" :"Item"}}}"#,
        #"{"content":{"screen":{"name":"Item"}},"extra":1}"#,
        #"{"content":{"screen":{"name":"Item","extra":1}}}"#,
        #"{"content":{"screen":{"name":"Item"},"coordinator":{"type":"ignored"}}}"#,
        #"{"content":{"screen":null,"coordinator":{"type":"cart"}}}"#,
        #"{"content":{"screen":{"name":"A","name":"B"}}}"#,
        #"{"content":{"screen":{"name":"A"}},"state":1,"state":2}"#,
        #"{"content":{"screen":{"n\u0061me":"Item"}}}"#,
        #"{"\u0063ontent":{"screen":{"name":"Item"}}}"#,
    ]

    @Test(
        "a valid route answer outside the byte reader's shape is left to the tree reader", arguments: answersOutOfShape)
    func outOfShape(_ text: String) throws {
        let value = try Self.parse(text)
        #expect(CoordinatorRouteRequest.Result(resultBytes: Array(text.utf8)[...], maxDepth: 64) == nil)
        #expect(CoordinatorRouteRequest.Result(reading: value) != nil)
    }

    @Test("the byte reader keeps the line's depth limit: what the parser would refuse, it leaves to the general path")
    func depthFromBytes() throws {
        // Inside a line: envelope 1, result 2, content 3, screen 4, props 5, then 5 more levels.
        let text = #"{"content":{"screen":{"name":"I","props":[[[[[1]]]]]}}}"#
        let bytes = Array(text.utf8)[...]
        #expect(CoordinatorRouteRequest.Result(resultBytes: bytes, maxDepth: 9) != nil)
        #expect(CoordinatorRouteRequest.Result(resultBytes: bytes, maxDepth: 8) == nil)
        let line = Array(#"{"jsonrpc":"2.0","id":1,"result":"#.utf8) + bytes + [UInt8(ascii: "}")]
        #expect(MessageReader.answer(line[...], maxDepth: 9) != nil)
        #expect(MessageReader.answer(line[...], maxDepth: 8) == nil)
        for depth in 0...4 { #expect(CoordinatorRouteRequest.Result(resultBytes: bytes, maxDepth: depth) == nil) }
    }

    static let createAnswers: [String] = [
        #"{}"#,
        #"{"root":null,"tabs":null,"selectedTab":null,"child":null,"state":null}"#,
        #"{"root":{"route":"home","content":{"screen":{"name":"Home"}}},"state":{"v":1}}"#,
        #"{"root":{"route":"item","params":null,"content":{"coordinator":{"plugin":"p","type":"t","params":{"x":1}}}}}"#,
        #"{"tabs":[{"route":"a","content":{"screen":{"name":"A"}}},{"route":"b","content":{"coordinator":{"type":"b"}}}],"selectedTab":"b"}"#,
        #"{"tabs":[],"child":{"screen":{"name":"W","props":[1]}},"extra":true}"#,
    ]

    static let invalidCreateAnswers: [String] = [
        #"1"#, #"{"root":1}"#, #"{"root":{}}"#, #"{"root":{"route":"r"}}"#, #"{"root":{"route":"r","content":null}}"#,
        #"{"tabs":{}}"#, #"{"tabs":[1]}"#, #"{"tabs":[{"route":"a","content":{}}]}"#, #"{"selectedTab":3}"#,
        #"{"child":{}}"#,
    ]

    @Test("create answers read directly are what Codable reads", arguments: createAnswers)
    func sameCreateAnswer(_ text: String) throws {
        try Self.readAsCodable(text, CoordinatorCreateRequest.Result.init(reading:))
    }

    @Test("a create answer Codable rejects is left to Codable", arguments: invalidCreateAnswers)
    func invalidCreateAnswer(_ text: String) throws {
        try Self.leftToCodable(text, CoordinatorCreateRequest.Result.init(reading:))
    }
}
