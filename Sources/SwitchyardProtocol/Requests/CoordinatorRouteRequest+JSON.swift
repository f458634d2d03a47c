// `coordinator/route` on the byte path (JSON/README.md): the params the host writes per hop, byte for byte what
// the `Encodable` conformance produces, and the answer it reads from the parsed tree as the `Decodable` conformance
// reads it (`RouteRequestWritableTests` pins both). A deep link across four plugins sends one per hop; through
// Codable's generic containers the navigation path was about 40% of the host's instructions per link.

extension CoordinatorRouteRequest.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"type\":", type)
        writer.field(",\"route\":", route)
        writer.field(",\"transition\":", transition.rawValue)
        var first = false
        writer.member("params", params, first: &first)
        writer.member("link", link, first: &first)
        writer.append(UInt8(ascii: "}"))
    }
}

extension CoordinatorRouteRequest.Result {
    /// The answer read straight from the parsed tree, exactly as its `Decodable` conformance reads it, or nil for
    /// anything that conformance would reject: the caller then decodes it with Codable, which names what is wrong,
    /// so errors stay as they were. Every route answer passes here, and Codable's keyed containers cost about as
    /// much as the rest of the host's work on it.
    public init?(reading value: JSONValue) {
        guard case .object(let object) = value, let content = object["content"].flatMap(RouteContent.init(reading:))
        else { return nil }
        self.init(content: content, state: object["state"])
    }
}

extension CoordinatorRouteRequest.Result {
    private static let contentKey = JSONShape.Key("content")
    private static let stateKey = JSONShape.Key("state")
    private static let screenKey = JSONShape.Key("screen")
    private static let coordinatorKey = JSONShape.Key("coordinator")
    /// A screen's members, then a coordinator's, by their slot in ``readContent(_:at:maxDepth:)``'s values.
    private static let screenKeys = [
        JSONShape.Key("name"), JSONShape.Key("props"), JSONShape.Key("title"), JSONShape.Key("content"),
    ]
    private static let coordinatorKeys = [JSONShape.Key("plugin"), JSONShape.Key("type"), JSONShape.Key("params")]

    /// The answer read from the result's bytes as ``init(reading:)`` reads it from a tree, without the tree: only
    /// the values inside it (props, state, params, content) are parsed. Every route answer a chain waits for comes
    /// this way (`MessageReader.nextKeepingAnswers`), and building the envelope's objects was half the host's cost of
    /// reading one. It takes the shape the SDKs write: no whitespace between members, member names without escapes,
    /// each at most once, `content` holding either `screen` or `coordinator`, no other member. Anything else is nil,
    /// and the general path reads it (`RouteRequestWritableTests` pins both to Codable).
    ///
    /// - Parameter maxDepth: the nesting limit of the whole line; the result is one level inside it.
    package init?(resultBytes bytes: ArraySlice<UInt8>, maxDepth: Int) {
        guard maxDepth > 4 else { return nil }
        guard let result = Self.read(bytes.span, maxDepth: maxDepth - 1) else { return nil }
        self = result
    }

    private static func read(_ span: Span<UInt8>, maxDepth: Int) -> Self? {
        var index = 0
        guard JSONShape.take(UInt8(ascii: "{"), in: span, at: &index) else { return nil }
        var content: RouteContent?
        var state: JSONValue?
        var seenState = false
        repeat {
            let key = JSONShape.memberKey(in: span, at: &index)
            if key == contentKey {
                guard content == nil, let read = readContent(span, at: &index, maxDepth: maxDepth) else { return nil }
                content = read
            } else if key == stateKey {
                guard !seenState, let value = try? JSONParser.value(in: span, at: &index, depth: 1, maxDepth: maxDepth)
                else { return nil }
                seenState = true
                state = value
            } else {
                return nil
            }
            guard let more = JSONShape.memberFollows(in: span, at: &index) else { return nil }
            if !more { break }
        } while true
        guard index == span.count, let content else { return nil }
        return Self(content: content, state: state)
    }

    /// `{"screen":{…}}` or `{"coordinator":{…}}` at depth 2.
    private static func readContent(_ span: Span<UInt8>, at index: inout Int, maxDepth: Int) -> RouteContent? {
        guard JSONShape.take(UInt8(ascii: "{"), in: span, at: &index) else { return nil }
        let kind = JSONShape.memberKey(in: span, at: &index)
        let isScreen = kind == screenKey
        guard isScreen || kind == coordinatorKey, JSONShape.take(UInt8(ascii: "{"), in: span, at: &index) else {
            return nil
        }
        var values: (JSONValue?, JSONValue?, JSONValue?, JSONValue?) = (nil, nil, nil, nil)
        let keys = isScreen ? screenKeys : coordinatorKeys
        if !JSONShape.take(UInt8(ascii: "}"), in: span, at: &index) {
            repeat {
                guard let key = JSONShape.memberKey(in: span, at: &index), let member = keys.firstIndex(of: key),
                    let value = try? JSONParser.value(in: span, at: &index, depth: 3, maxDepth: maxDepth)
                else { return nil }
                switch member {
                case 0 where values.0 == nil: values.0 = value
                case 1 where values.1 == nil: values.1 = value
                case 2 where values.2 == nil: values.2 = value
                case 3 where values.3 == nil: values.3 = value
                default: return nil  // a member given twice
                }
                guard let more = JSONShape.memberFollows(in: span, at: &index) else { return nil }
                if !more { break }
            } while true
        }
        guard JSONShape.take(UInt8(ascii: "}"), in: span, at: &index) else { return nil }
        return isScreen
            ? RouteContent.screen(name: values.0, props: values.1, title: values.2, content: values.3)
            : RouteContent.coordinator(plugin: values.0, type: values.1, params: values.2)
    }
}
