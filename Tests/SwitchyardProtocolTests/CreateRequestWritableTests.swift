import SwitchyardProtocol
import Testing

/// `coordinator/create` written directly (``JSONWritable``) must be byte for byte what Codable writes: the host
/// sends its params that way on a restart, the Swift SDK answers that way.
@Suite("coordinator/create written directly", .timeLimit(.minutes(1)))
struct CreateRequestWritableTests {
    static let snapshot = InstanceSnapshot(
        id: InstanceID(4), plugin: "shop", type: "cart", kind: .stack,
        parent: .init(instance: InstanceID(1), entry: EntryID(2)),
        params: ["n": 2], state: ["items": [1, 2]],
        root: EntrySnapshot(
            entry: EntryID(9), route: "list", transition: .root, content: .screen(ScreenDescriptor(name: "Cart"))),
        entries: [])

    static let params: [CoordinatorCreateRequest.Params] = [
        .init(instance: InstanceID(1), type: "shop", reason: .new),
        .init(instance: InstanceID(2), type: "shop", reason: .restart, params: .null, state: .null),
        .init(
            instance: InstanceID(4), type: "cart", reason: .restore,
            params: ["n": 2, "s": "é\n\"", "d": 1.5, "b": true],
            parent: .init(instance: InstanceID(1), plugin: "shop", route: "cart"), state: ["items": [1, 2]],
            restore: snapshot),
        .init(instance: InstanceID(5), type: "t", reason: .new, params: 7, state: "text"),
    ]

    static let results: [CoordinatorCreateRequest.Result] = [
        .init(),
        .init(
            root: .init(route: "home", content: .screen(ScreenDescriptor(name: "Home", props: ["a": [1, .null]]))),
            state: ["visits": 0]),
        .init(
            root: .init(
                route: "item", params: ["id": "7"],
                content: .coordinator(CoordinatorReference(plugin: "p", type: "t"), params: ["x": 1]))),
        .init(
            tabs: [
                .init(
                    route: "shop", content: .coordinator(CoordinatorReference(plugin: nil, type: "shop"), params: nil)),
                .init(route: "help", content: .screen(ScreenDescriptor(name: "Help"))),
            ],
            selectedTab: "help"),
        .init(tabs: []),
        .init(child: .screen(ScreenDescriptor(name: "Wrapped")), state: .null),
        .init(
            root: .init(
                route: "list",
                content: .screen(
                    ScreenDescriptor(
                        name: "List", props: ["n": 1], title: "Todos",
                        content: [["type": "button", "title": "Add", "action": ["name": "add", "inputs": ["t"]]]])))),
    ]

    static func codable<T: Encodable>(_ value: T) throws -> String {
        JSONWriter.string(try JSONValueEncoder().encode(value))
    }

    static func written(_ value: some JSONWritable) -> String {
        var writer = JSONWriter()
        value.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test("params: every member, each optional present and absent", arguments: params)
    func sameParams(_ params: CoordinatorCreateRequest.Params) throws {
        #expect(Self.written(params) == (try Self.codable(params)))
    }

    @Test("results: a root (screen, coordinator), tabs, a wrapper's child, state", arguments: results)
    func sameResults(_ result: CoordinatorCreateRequest.Result) throws {
        #expect(Self.written(result) == (try Self.codable(result)))
    }

    @Test("a result with its state already encoded writes those bytes in the state's place")
    func encodedState() throws {
        var result = Self.results[1]
        var writer = JSONWriter()
        result.write(to: &writer, encodedState: Array(#"{"visits":3}"#.utf8))
        result.state = ["visits": 3]
        #expect(String(decoding: writer.bytes, as: UTF8.self) == (try Self.codable(result)))
    }

    @Test("a request line around encoded params is the request's own line")
    func requestLine() throws {
        let params = Self.params[2]
        let line = Message.requestLine(
            id: .number(12), method: CoordinatorCreateRequest.method, encodedParams: Array(Self.written(params).utf8))
        let expected = Message.request(
            id: .number(12), method: CoordinatorCreateRequest.method, params: try Coding.encode(params)
        ).encodedLine()
        #expect(String(decoding: line, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }
}
