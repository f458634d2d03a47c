public import SwitchyardProtocol

// A contract as a document (Protocol/README.md §19, `schema/contract.schema.json`): written as the same bytes for the
// same table whatever the order of its declarations, so it can be committed and diffed line by line.
extension RouteContract {
    /// The document as JSON: every member spelled out (a param's `required` too), absent ones left out.
    public var json: JSONValue {
        var document: JSONObject = [
            "contractVersion": .int(Int64(Self.formatVersion)),
            "plugin": ["name": .string(plugin.name), "version": .string(plugin.version)],
            "protocolVersion": .int(Int64(protocolVersion)),
        ]
        var types = JSONObject()
        for (name, type) in self.types { types[name] = type.json }
        document["types"] = .object(types)
        var references = JSONObject()
        for (plugin, targets) in self.references {
            var byType = JSONObject()
            for (type, pointers) in targets { byType[type] = .array(pointers.map { .string($0.description) }) }
            references[plugin] = .object(byType)
        }
        document["references"] = .object(references)
        return .object(document)
    }

    /// The bytes of the contract file: keys sorted, two spaces of indentation, a newline at the end. The same
    /// contract always gives the same bytes.
    public func encoded() -> [UInt8] {
        var printer = PrettyPrinter()
        printer.write(json, depth: 0)
        printer.bytes.append(0x0A)
        return printer.bytes
    }
}

extension ContractType {
    var json: JSONValue {
        var object: JSONObject = ["kind": .string(kind.rawValue)]
        if let initialRoute { object["initialRoute"] = .string(initialRoute) }
        if customDeepLinks { object["customDeepLinks"] = true }
        if let params { object["params"] = ContractParam.json(params) }
        var routes = JSONObject()
        for (name, route) in self.routes { routes[name] = route.json }
        object["routes"] = .object(routes)
        if kind == .tabs { object["tabs"] = .array(tabs.map(JSONValue.string)) }
        return .object(object)
    }
}

extension ContractRoute {
    var json: JSONValue {
        var object: JSONObject = ["transition": .string(transition.rawValue)]
        if !transitions.isEmpty { object["transitions"] = .array(transitions.map { .string($0.rawValue) }) }
        if let deepLink { object["deepLink"] = .string(deepLink) }
        if let params { object["params"] = ContractParam.json(params) }
        if let target {
            var reference: JSONObject = ["type": .string(target.type)]
            if let plugin = target.plugin { reference["plugin"] = .string(plugin) }
            object["target"] = .object(reference)
        }
        if let targetParams { object["targetParams"] = ContractParam.json(targetParams) }
        if !actions.isEmpty {
            var actions = JSONObject()
            for (name, action) in self.actions {
                var declared = JSONObject()
                if let params = action.params { declared["params"] = ContractParam.json(params) }
                actions[name] = .object(declared)
            }
            object["actions"] = .object(actions)
        }
        return .object(object)
    }
}

extension ContractParam {
    static func json(_ params: [String: ContractParam]) -> JSONValue {
        var object = JSONObject()
        for (name, param) in params {
            object[name] = ["type": .string(param.type.rawValue), "required": .bool(param.required)]
        }
        return .object(object)
    }
}

/// Indented JSON with sorted keys (by their UTF-8 bytes, so the order is the same on every platform); arrays of
/// scalars on one line, as a reader scans a list of names.
private struct PrettyPrinter {
    var bytes: [UInt8] = []

    mutating func write(_ value: JSONValue, depth: Int) {
        switch value {
        case .object(let object):
            guard !object.keys.isEmpty else { return append("{}") }
            append("{\n")
            let keys = object.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            for (index, key) in keys.enumerated() {
                indent(depth + 1)
                bytes += JSONWriter.encode(.string(key))
                append(": ")
                write(object[key] ?? .null, depth: depth + 1)
                append(index == keys.count - 1 ? "\n" : ",\n")
            }
            indent(depth)
            append("}")
        case .array(let elements):
            guard !elements.isEmpty else { return append("[]") }
            if elements.allSatisfy({ $0.arrayValue == nil && $0.objectValue == nil }) {
                append("[")
                for (index, element) in elements.enumerated() {
                    if index > 0 { append(", ") }
                    bytes += JSONWriter.encode(element)
                }
                append("]")
                return
            }
            append("[\n")
            for (index, element) in elements.enumerated() {
                indent(depth + 1)
                write(element, depth: depth + 1)
                append(index == elements.count - 1 ? "\n" : ",\n")
            }
            indent(depth)
            append("]")
        default:
            bytes += JSONWriter.encode(value)
        }
    }

    private mutating func append(_ text: String) { bytes += text.utf8 }
    private mutating func indent(_ depth: Int) { bytes += repeatElement(UInt8(ascii: " "), count: depth * 2) }
}
