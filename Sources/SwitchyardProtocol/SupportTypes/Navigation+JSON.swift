// The shared navigation types written straight to bytes, byte for byte what their `Encodable` conformances
// produce, and read straight from a parsed tree as their `Decodable` conformances read them. Snapshots are the
// largest thing the host writes (`tree/get`, `tree/changed`, the state file); the others are members of the
// messages every navigation hop carries. Pinned by `JSONStreamEncoderTests` and `RouteRequestWritableTests`
// (see JSON/README.md).

extension ScreenDescriptor: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        writer.key("name", first: &first)
        writer.writeString(name)
        if let props {
            writer.key("props", first: &first)
            writer.write(props)
        }
        if let title {
            writer.key("title", first: &first)
            writer.writeString(title)
        }
        if let content {
            writer.key("content", first: &first)
            writer.write(content)
        }
        writer.append(UInt8(ascii: "}"))
    }
}

extension ContentSnapshot: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        switch self {
        case .screen(let screen):
            writer.key("screen", first: &first)
            screen.write(to: &writer)
        case .coordinator(let id):
            writer.key("coordinator", first: &first)
            writer.writeInteger(id.rawValue)
        }
        writer.append(UInt8(ascii: "}"))
    }
}

extension EntrySnapshot: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        writer.key("entry", first: &first)
        writer.writeInteger(entry.rawValue)
        writer.key("route", first: &first)
        writer.writeString(route)
        writer.key("transition", first: &first)
        writer.writeString(transition.rawValue)
        if let params {
            writer.key("params", first: &first)
            writer.write(params)
        }
        writer.key("content", first: &first)
        content.write(to: &writer)
        if let badge {
            writer.key("badge", first: &first)
            writer.writeString(badge)
        }
        if let presentation {
            writer.key("presentation", first: &first)
            presentation.write(to: &writer)
        }
        writer.append(UInt8(ascii: "}"))
    }
}

extension InstanceSnapshot: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        writer.key("id", first: &first)
        writer.writeInteger(id.rawValue)
        writer.key("plugin", first: &first)
        writer.writeString(plugin)
        writer.key("type", first: &first)
        writer.writeString(type)
        if let kind {
            writer.key("kind", first: &first)
            writer.writeString(kind.rawValue)
        }
        if let pending {
            writer.key("pending", first: &first)
            writer.writeRaw(pending ? "true" : "false")
        }
        if let parent {
            writer.key("parent", first: &first)
            writer.writeRaw("{\"instance\":")
            writer.writeInteger(parent.instance.rawValue)
            writer.writeRaw(",\"entry\":")
            writer.writeInteger(parent.entry.rawValue)
            writer.append(UInt8(ascii: "}"))
        }
        if let params {
            writer.key("params", first: &first)
            writer.write(params)
        }
        if let state {
            writer.key("state", first: &first)
            writer.write(state)
        }
        writer.key("status", first: &first)
        writer.writeString(status.rawValue)
        if let unavailableReason {
            writer.key("unavailableReason", first: &first)
            writer.writeString(unavailableReason)
        }
        if let root {
            writer.key("root", first: &first)
            root.write(to: &writer)
        }
        func list(_ name: String, _ entries: [EntrySnapshot]?) {
            guard let entries else { return }
            writer.key(name, first: &first)
            writer.append(UInt8(ascii: "["))
            for (index, entry) in entries.enumerated() {
                if index > 0 { writer.append(UInt8(ascii: ",")) }
                entry.write(to: &writer)
            }
            writer.append(UInt8(ascii: "]"))
        }
        list("entries", entries)
        list("tabs", tabs)
        if let selectedTab {
            writer.key("selectedTab", first: &first)
            writer.writeString(selectedTab)
        }
        if let child {
            writer.key("child", first: &first)
            child.write(to: &writer)
        }
        if let dynamicTabs {
            writer.key("dynamicTabs", first: &first)
            writer.writeRaw(dynamicTabs ? "true" : "false")
        }
        writer.append(UInt8(ascii: "}"))
    }
}

extension TreeSnapshot: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        writer.key("revision", first: &first)
        if let exact = Int64(exactly: revision) {
            writer.writeInteger(exact)
        } else {
            writer.writeDouble(Double(revision))
        }
        if let root {
            writer.key("root", first: &first)
            writer.writeInteger(root.rawValue)
        }
        writer.key("instances", first: &first)
        writer.append(UInt8(ascii: "["))
        for (index, instance) in instances.enumerated() {
            if index > 0 { writer.append(UInt8(ascii: ",")) }
            instance.write(to: &writer)
        }
        writer.append(UInt8(ascii: "]"))
        writer.append(UInt8(ascii: "}"))
    }
}

/// `coordinator/appeared`'s params (``CoordinatorAppearedNotification``).
extension EntryReference: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"entry\":", entry.rawValue)
        writer.append(UInt8(ascii: "}"))
    }
}

extension DeepLinkContext: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.writeRaw("{\"url\":")
        writer.writeString(url)
        writer.writeRaw(",\"segments\":[")
        for (position, segment) in segments.enumerated() {
            if position > 0 { writer.append(UInt8(ascii: ",")) }
            writer.writeString(segment)
        }
        writer.writeRaw("],\"index\":")
        writer.writeInteger(Int64(index))
        writer.writeRaw(",\"query\":{")
        // The dictionary's own iteration order, as `Dictionary.encode(to:)` walks it.
        var first = true
        for (name, value) in query {
            if !first { writer.append(UInt8(ascii: ",")) }
            first = false
            writer.writeString(name)
            writer.append(UInt8(ascii: ":"))
            writer.writeString(value)
        }
        writer.writeRaw("}}")
    }
}

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

extension RouteContent {
    /// `{"screen":…}` or `{"coordinator":…}` read as the `Decodable` conformance reads it (absent and null
    /// optional strings and screens are nil; a null `props` or `params` is kept as null; other members are
    /// ignored), or nil for anything it would reject.
    init?(reading value: JSONValue) {
        guard case .object(let content) = value else { return nil }
        switch content["screen"] {
        case .object(let screen)?:
            guard
                let read = Self.screen(
                    name: screen["name"], props: screen["props"], title: screen["title"], content: screen["content"])
            else { return nil }
            self = read
        case nil, .null?:
            guard case .object(let coordinator)? = content["coordinator"],
                let read = Self.coordinator(
                    plugin: coordinator["plugin"], type: coordinator["type"], params: coordinator["params"])
            else { return nil }
            self = read
        default:
            return nil
        }
    }

    /// A screen from its members as the `Decodable` conformance takes them (a string `name`; a `title` that is a
    /// string, null or absent; `props` and `content` as they are), or nil. The tree reader and the byte reader
    /// (`CoordinatorRouteRequest.Result(resultBytes:maxDepth:)`) share it, so they accept exactly the same.
    static func screen(name: JSONValue?, props: JSONValue?, title: JSONValue?, content: JSONValue?) -> RouteContent? {
        guard case .string(let name)? = name, let title = JSONValue.optionalString(title) else { return nil }
        return .screen(ScreenDescriptor(name: name, props: props, title: title, content: content))
    }

    /// A coordinator from its members (a string `type`; a `plugin` that is a string, null or absent; `params` as it
    /// is), or nil; shared as ``screen(name:props:title:content:)`` is.
    static func coordinator(plugin: JSONValue?, type: JSONValue?, params: JSONValue?) -> RouteContent? {
        guard case .string(let type)? = type, let plugin = JSONValue.optionalString(plugin) else { return nil }
        return .coordinator(CoordinatorReference(plugin: plugin, type: type), params: params)
    }
}
