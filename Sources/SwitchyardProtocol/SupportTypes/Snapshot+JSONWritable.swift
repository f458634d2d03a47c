/// A type that writes its own compact JSON, byte for byte what its `Encodable` conformance produces.
///
/// Why: snapshots are the largest thing the host writes (`tree/get`, `tree/changed`, the state file). Through
/// Codable a 1,000-instance tree took ~36 ms to encode, almost all of it generic container dispatch; written
/// directly it is a few ms. `JSONStreamEncoderTests` pins every conformance to its Codable output.
public protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}

extension JSONWriter {
    /// A member name known not to need escaping.
    mutating func key(_ name: String, first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        append(UInt8(ascii: "\""))
        writeRaw(name)
        append(UInt8(ascii: "\""))
        append(UInt8(ascii: ":"))
    }
}

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

extension PresentationOptions: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        if let detents {
            writer.key("detents", first: &first)
            writer.append(UInt8(ascii: "["))
            for (index, detent) in detents.enumerated() {
                if index > 0 { writer.append(UInt8(ascii: ",")) }
                writer.writeString(detent)
            }
            writer.append(UInt8(ascii: "]"))
        }
        if let interactiveDismissDisabled {
            writer.key("interactiveDismissDisabled", first: &first)
            writer.writeRaw(interactiveDismissDisabled ? "true" : "false")
        }
        if let customTransition {
            writer.key("customTransition", first: &first)
            writer.writeString(customTransition)
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
        if let exact = Int64(exactly: revision) { writer.writeInteger(exact) } else { writer.writeDouble(Double(revision)) }
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
