// `coordinator/create` written straight to bytes, byte for byte what the `Encodable` conformances produce
// (`JSONStreamEncoderTests` pins them): the host sends one per instance when a plugin restarts (a 1,000-instance
// plugin gets 1,000 of them at once), and the Swift SDK answers them, so neither side should pay Codable's generic
// container dispatch per instance.

extension RouteContent: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .screen(let screen):
            writer.writeRaw("{\"screen\":")
            screen.write(to: &writer)
        case .coordinator(let reference, let params):
            writer.writeRaw("{\"coordinator\":{")
            if let plugin = reference.plugin {
                writer.writeRaw("\"plugin\":")
                writer.writeString(plugin)
                writer.append(UInt8(ascii: ","))
            }
            writer.writeRaw("\"type\":")
            writer.writeString(reference.type)
            if let params {
                writer.writeRaw(",\"params\":")
                writer.write(params)
            }
            writer.append(UInt8(ascii: "}"))
        }
        writer.append(UInt8(ascii: "}"))
    }
}

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
        writer.append(UInt8(ascii: "}"))
    }
}

extension CoordinatorCreateRequest.Root: JSONWritable {
    public func write(to writer: inout JSONWriter) { writer.initialContent(route: route, params: params, content: content) }
}

extension CoordinatorCreateRequest.Tab: JSONWritable {
    public func write(to writer: inout JSONWriter) { writer.initialContent(route: route, params: nil, content: content) }
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

extension JSONWriter {
    /// A stack's root or a tab: `{"route":…,"params":…,"content":…}`.
    mutating func initialContent(route: String, params: JSONValue?, content: RouteContent) {
        var first = true
        append(UInt8(ascii: "{"))
        member("route", route, first: &first)
        member("params", params, first: &first)
        member("content", content, first: &first)
        append(UInt8(ascii: "}"))
    }

    /// `"name":value` (after a comma unless first), or nothing for nil: how Codable writes an optional member.
    mutating func member(_ name: String, _ value: JSONValue?, first: inout Bool) {
        guard let value else { return }
        key(name, first: &first)
        write(value)
    }

    mutating func member(_ name: String, _ value: String?, first: inout Bool) {
        guard let value else { return }
        key(name, first: &first)
        writeString(value)
    }

    mutating func member(_ name: String, _ value: (some JSONWritable)?, first: inout Bool) {
        guard let value else { return }
        key(name, first: &first)
        value.write(to: &self)
    }

    mutating func member(_ name: String, _ values: [some JSONWritable]?, first: inout Bool) {
        guard let values else { return }
        key(name, first: &first)
        append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            value.write(to: &self)
        }
        append(UInt8(ascii: "]"))
    }
}
