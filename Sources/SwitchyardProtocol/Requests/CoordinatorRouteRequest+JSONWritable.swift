// What the host sends along the navigation path, written straight to bytes, byte for byte what the `Encodable`
// conformances produce, and the answers it reads there, read straight from the parsed tree as the `Decodable`
// conformances read them (`RouteRequestWritableTests` pins both): a deep link across four plugins sends a
// `coordinator/route` per hop (with the link's context), a `coordinator/create` per coordinator it opens, and the
// notifications its commit causes; through Codable's generic containers that was about 40% of the host's
// instructions per link.

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

extension CoordinatorDestroyRequest.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"type\":", type)
        writer.append(UInt8(ascii: "}"))
    }
}

extension CoordinatorDismissedNotification.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"entry\":", entry.rawValue)
        writer.field(",\"route\":", route)
        writer.field(",\"reason\":", reason.rawValue)
        writer.append(UInt8(ascii: "}"))
    }
}

extension CoordinatorTabSelectedNotification.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"tab\":", tab)
        writer.writeRaw(isRepeat ? ",\"isRepeat\":true}" : ",\"isRepeat\":false}")
    }
}

/// `coordinator/appeared`'s params.
extension EntryReference: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"entry\":", entry.rawValue)
        writer.append(UInt8(ascii: "}"))
    }
}

extension JSONWriter {
    /// `{"instance":N`: how each of these params begins.
    mutating func openInstance(_ instance: InstanceID) {
        writeRaw("{\"instance\":")
        writeInteger(instance.rawValue)
    }

    /// A member after the first, its name and colon given (`,"type":`), with a string value.
    mutating func field(_ prefix: String, _ text: String) {
        writeRaw(prefix)
        writeString(text)
    }

    /// A member after the first, its name and colon given, with an integer value.
    mutating func field(_ prefix: String, _ number: Int64) {
        writeRaw(prefix)
        writeInteger(number)
    }
}

extension CoordinatorRouteRequest.Result {
    /// The answer read straight from the parsed tree, exactly as its `Decodable` conformance reads it, or nil for
    /// anything that conformance would reject: the caller then decodes it with Codable, which names what is wrong,
    /// so errors stay as they were. Every route answer passes here, and Codable's keyed containers cost about as
    /// much as the rest of the host's work on it.
    public init?(reading value: JSONValue) {
        guard case .object(let object) = value, let content = object["content"].flatMap(RouteContent.init(reading:)) else { return nil }
        self.init(content: content, state: object["state"])
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
            guard case .string(let route)? = member["route"], let content = member["content"].flatMap(RouteContent.init(reading:)) else {
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
                guard case .string(let route)? = element["route"], let content = element["content"].flatMap(RouteContent.init(reading:)) else {
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

extension RouteContent {
    /// `{"screen":…}` or `{"coordinator":…}` read as the `Decodable` conformance reads it (absent and null
    /// optional strings and screens are nil; a null `props` or `params` is kept as null; other members are
    /// ignored), or nil for anything it would reject.
    init?(reading value: JSONValue) {
        guard case .object(let content) = value else { return nil }
        switch content["screen"] {
        case .object(let screen)?:
            guard case .string(let name)? = screen["name"] else { return nil }
            self = .screen(ScreenDescriptor(name: name, props: screen["props"]))
        case nil, .null?:
            guard case .object(let coordinator)? = content["coordinator"], case .string(let type)? = coordinator["type"],
                let plugin = JSONValue.optionalString(coordinator["plugin"])
            else { return nil }
            self = .coordinator(CoordinatorReference(plugin: plugin, type: type), params: coordinator["params"])
        default:
            return nil
        }
    }
}

extension JSONValue {
    /// An optional string member as Codable reads it: `.some(nil)` when absent or null, nil when not a string.
    static func optionalString(_ member: JSONValue?) -> String?? {
        switch member {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        default: return nil
        }
    }
}
