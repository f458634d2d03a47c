// `coordinator/create` on the byte path (JSON/README.md): the host sends one per instance when a plugin restarts
// (a 1,000-instance plugin gets 1,000 at once) and the Swift SDK answers them, so neither side pays Codable's
// generic container dispatch per instance. The writers are byte for byte what the `Encodable` conformances produce
// (`CreateRequestWritableTests`, `JSONStreamEncoderTests`); the answer's reader reads what the `Decodable`
// conformance reads (`RouteRequestWritableTests`).

extension CoordinatorCreateRequest.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        writer.key("instance", first: &first)
        writer.writeInteger(instance.rawValue)
        writer.member("type", type, first: &first)
        writer.member("reason", reason.rawValue, first: &first)
        writer.member("params", params, first: &first)
        if let parent {
            writer.key("parent", first: &first)
            writer.writeRaw("{\"instance\":")
            writer.writeInteger(parent.instance.rawValue)
            writer.writeRaw(",\"plugin\":")
            writer.writeString(parent.plugin)
            writer.writeRaw(",\"route\":")
            writer.writeString(parent.route)
            writer.append(UInt8(ascii: "}"))
        }
        writer.member("state", state, first: &first)
        writer.member("restore", restore, first: &first)
        writer.member("fromVersion", fromVersion, first: &first)
        writer.append(UInt8(ascii: "}"))
    }
}

extension CoordinatorCreateRequest.Root: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.initialContent(route: route, params: params, content: content)
    }
}

extension CoordinatorCreateRequest.Tab: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.initialContent(route: route, params: nil, content: content)
    }
}

extension CoordinatorCreateRequest.Result: JSONWritable {
    public func write(to writer: inout JSONWriter) { write(to: &writer, encodedState: nil) }

    /// The result with its state already encoded (`encodedState`, written in place of ``state`` when given): the
    /// SDK encodes a coordinator's state straight to bytes.
    public func write(to writer: inout JSONWriter, encodedState: [UInt8]?) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        writer.member("root", root, first: &first)
        writer.member("tabs", tabs, first: &first)
        writer.member("selectedTab", selectedTab, first: &first)
        writer.member("child", child, first: &first)
        if let encodedState {
            writer.key("state", first: &first)
            writer.writeRawBytes(encodedState)
        } else {
            writer.member("state", state, first: &first)
        }
        writer.append(UInt8(ascii: "}"))
    }
}

extension CoordinatorCreateRequest.Result {
    /// The answer read straight from the parsed tree, as ``CoordinatorRouteRequest/Result/init(reading:)`` reads a
    /// route's: nil for anything Codable would reject, which Codable then reports. A deep link creates a
    /// coordinator at each plugin it crosses.
    public init?(reading value: JSONValue) {
        guard case .object(let object) = value else { return nil }
        var root: CoordinatorCreateRequest.Root?
        switch object["root"] {
        case nil, .null?: root = nil
        case .object(let member)?:
            guard case .string(let route)? = member["route"],
                let content = member["content"].flatMap(RouteContent.init(reading:))
            else {
                return nil
            }
            root = .init(route: route, params: member["params"], content: content)
        default: return nil
        }
        var tabs: [CoordinatorCreateRequest.Tab]?
        switch object["tabs"] {
        case nil, .null?: tabs = nil
        case .array(let elements)?:
            var read: [CoordinatorCreateRequest.Tab] = []
            read.reserveCapacity(elements.count)
            for element in elements {
                guard case .string(let route)? = element["route"],
                    let content = element["content"].flatMap(RouteContent.init(reading:))
                else {
                    return nil
                }
                read.append(.init(route: route, content: content))
            }
            tabs = read
        default: return nil
        }
        guard let selectedTab = JSONValue.optionalString(object["selectedTab"]) else { return nil }
        var child: RouteContent?
        switch object["child"] {
        case nil, .null?: child = nil
        case let member?:
            guard let content = RouteContent(reading: member) else { return nil }
            child = content
        }
        self.init(root: root, tabs: tabs, selectedTab: selectedTab, child: child, state: object["state"])
    }
}

extension JSONWriter {
    /// A stack's root or a tab: `{"route":…,"params":…,"content":…}`.
    fileprivate mutating func initialContent(route: String, params: JSONValue?, content: RouteContent) {
        var first = true
        append(UInt8(ascii: "{"))
        member("route", route, first: &first)
        member("params", params, first: &first)
        member("content", content, first: &first)
        append(UInt8(ascii: "}"))
    }
}
