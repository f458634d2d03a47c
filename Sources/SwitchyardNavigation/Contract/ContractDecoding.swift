public import SwitchyardProtocol

/// Why a contract file cannot be read: where (a JSON pointer, and the line and column when the text shows them) and
/// what is wrong.
public struct ContractFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the problem is about; the document itself for text that is not JSON.
    public let pointer: JSONPointer
    /// What is wrong.
    public let message: String
    /// Where in the text, when it could be found.
    public let position: TextPosition?

    /// An error about the member at `pointer`, found at `position` in the text when known.
    public init(pointer: JSONPointer, message: String, position: TextPosition? = nil) {
        self.pointer = pointer
        self.message = message
        self.position = position
    }

    public var description: String { pointer.tokens.isEmpty ? message : "\(pointer): \(message)" }
}

extension RouteContract {
    /// The largest contract file read: a route table of thousands of routes is a few hundred KiB.
    public static let maxFileBytes = 16 << 20

    /// Reads a contract document, strictly: every member of the format checked (a key it does not have is an error,
    /// as in a manifest), names as the protocol allows them, patterns that parse, `tabs` and `references` that agree
    /// with the routes. Whether the table composes is composition's question (`switchyard contract check`).
    public init(parsing bytes: [UInt8]) throws(ContractFormatError) {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw ContractFormatError(
                pointer: .root, message: "not valid JSON: \(error.reasonDescription)",
                position: TextPosition(offset: error.offset, in: bytes))
        }
        do {
            self = try ContractReader().contract(value)
        } catch {
            // An unknown member is shown at its key; anything else at the value that is wrong.
            let found = JSONParser.locate(error.pointer.path, in: bytes)
            let offset = error.atKey ? found?.key ?? found?.value : found?.value
            throw ContractFormatError(
                pointer: error.pointer, message: error.message,
                position: offset.map { TextPosition(offset: $0, in: bytes) })
        }
    }
}

/// Reads the document's values, each checked where it is, so an error names the member it is about.
private struct ContractReader {
    struct Failure: Error {
        let pointer: JSONPointer
        let message: String
        /// Whether the key is what is wrong (an unknown member), not its value.
        var atKey = false
    }

    func fail(_ pointer: JSONPointer, _ message: String) -> Failure { Failure(pointer: pointer, message: message) }

    func object(
        _ value: JSONValue?, at pointer: JSONPointer, known: [String], required: [String]
    ) throws(Failure) -> JSONObject {
        guard let value else { throw fail(pointer, "missing") }
        guard let object = value.objectValue else { throw fail(pointer, "expected an object, found \(value.kindName)") }
        for key in object.keys where !known.contains(key) {
            throw Failure(
                pointer: pointer.appending(key),
                message: "unknown member '\(key)' (members: \(known.joined(separator: ", ")))", atKey: true)
        }
        for key in required where object[key] == nil {
            throw fail(pointer, "missing member '\(key)'")
        }
        return object
    }

    /// The members of an object keyed by names (types, routes, params, actions): the caller checks each key.
    func members(_ value: JSONValue?, at pointer: JSONPointer) throws(Failure) -> Zip2Sequence<[String], [JSONValue]> {
        guard let value else { throw fail(pointer, "missing") }
        guard let object = value.objectValue else { throw fail(pointer, "expected an object, found \(value.kindName)") }
        return zip(object.keys, object.values)
    }

    func string(_ value: JSONValue?, at pointer: JSONPointer) throws(Failure) -> String {
        guard let value else { throw fail(pointer, "missing") }
        guard let text = value.stringValue else { throw fail(pointer, "expected a string, found \(value.kindName)") }
        return text
    }

    func name(_ text: String, at pointer: JSONPointer) throws(Failure) -> String {
        guard let first = text.unicodeScalars.first, Self.isNameScalar(first), first != "-", first != ".",
            text.unicodeScalars.allSatisfy(Self.isNameScalar)
        else {
            throw fail(
                pointer, "'\(text)' is not a name: letters, digits, '_', '-' and '.', not starting with '-' or '.'")
        }
        return text
    }

    static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || "_-.".unicodeScalars.contains(scalar)
    }

    func enumeration<T: RawRepresentable & CaseIterable>(
        _ value: JSONValue?, _: T.Type, at pointer: JSONPointer
    ) throws(Failure) -> T
    where T.RawValue == String {
        let text = try string(value, at: pointer)
        guard let parsed = T(rawValue: text) else {
            throw fail(pointer, "'\(text)' is not one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return parsed
    }

    func contract(_ value: JSONValue) throws(Failure) -> RouteContract {
        let top = try object(
            value, at: .root, known: ["contractVersion", "plugin", "protocolVersion", "references", "types"],
            required: ["contractVersion", "plugin", "protocolVersion", "types"])
        guard let version = top["contractVersion"]?.intValue else {
            throw fail(JSONPointer(["contractVersion"]), "expected an integer")
        }
        guard version == RouteContract.formatVersion else {
            throw fail(
                JSONPointer(["contractVersion"]),
                "a contract of format \(version); this switchyard reads format \(RouteContract.formatVersion)")
        }
        let pluginAt = JSONPointer(["plugin"])
        let plugin = try object(
            top["plugin"], at: pluginAt, known: ["name", "version"], required: ["name", "version"])
        let pluginName = try string(plugin["name"], at: pluginAt.appending("name"))
        guard !pluginName.isEmpty else { throw fail(pluginAt.appending("name"), "empty") }
        let info = PluginInfo(
            name: pluginName, version: try string(plugin["version"], at: pluginAt.appending("version")))
        guard let protocolVersion = top["protocolVersion"]?.intValue, protocolVersion >= 1 else {
            throw fail(JSONPointer(["protocolVersion"]), "expected a protocol version (an integer from 1)")
        }
        let typesAt = JSONPointer(["types"])
        var types: [String: ContractType] = [:]
        for (key, member) in try members(top["types"], at: typesAt) {
            types[try name(key, at: typesAt.appending(key))] = try type(member, at: .type(key))
        }
        let contract = RouteContract(plugin: info, protocolVersion: Int(protocolVersion), types: types)
        if let written = top["references"], written != contract.json["references"] {
            throw fail(
                JSONPointer(["references"]),
                "does not match the routes' targets (the section is derived from them: export the contract again)")
        }
        return contract
    }

    func type(_ value: JSONValue, at pointer: JSONPointer) throws(Failure) -> ContractType {
        let object = try object(
            value, at: pointer, known: ["kind", "initialRoute", "customDeepLinks", "params", "routes", "tabs"],
            required: ["kind", "routes"])
        let kind = try enumeration(object["kind"], CoordinatorKind.self, at: pointer.appending("kind"))
        let initialRoute = try object["initialRoute"].map { value throws(Failure) in
            try name(try string(value, at: pointer.appending("initialRoute")), at: pointer.appending("initialRoute"))
        }
        var customDeepLinks = false
        if let flag = object["customDeepLinks"] {
            guard case .bool(let set) = flag else {
                throw fail(pointer.appending("customDeepLinks"), "expected a boolean")
            }
            customDeepLinks = set
        }
        let routesAt = pointer.appending("routes")
        var routes: [String: ContractRoute] = [:]
        for (key, member) in try members(object["routes"], at: routesAt) {
            routes[try name(key, at: routesAt.appending(key))] = try route(member, at: routesAt.appending(key))
        }
        let declaredTabs = routes.filter { $0.value.transition == .tab }.keys.sorted()
        var tabs: [String] = []
        if let list = object["tabs"] {
            guard let elements = list.arrayValue else {
                throw fail(pointer.appending("tabs"), "expected an array of tab route names")
            }
            for element in elements {
                tabs.append(try string(element, at: pointer.appending("tabs")))
            }
        }
        guard tabs.sorted() == declaredTabs, kind == .tabs || tabs.isEmpty else {
            throw fail(
                pointer.appending("tabs"),
                "must list the type's tab routes in display order, each once (tab routes: \(declaredTabs.joined(separator: ", ")))"
            )
        }
        return ContractType(
            kind: kind, initialRoute: initialRoute, customDeepLinks: customDeepLinks,
            params: try object["params"].map { value throws(Failure) in
                try params(value, at: pointer.appending("params"))
            },
            routes: routes, tabs: tabs)
    }

    func route(_ value: JSONValue, at pointer: JSONPointer) throws(Failure) -> ContractRoute {
        let object = try object(
            value, at: pointer,
            known: ["transition", "transitions", "deepLink", "params", "target", "targetParams", "actions"],
            required: ["transition"])
        var route = ContractRoute(
            transition: try enumeration(object["transition"], Transition.self, at: pointer.appending("transition")))
        if let list = object["transitions"] {
            guard let elements = list.arrayValue else {
                throw fail(pointer.appending("transitions"), "expected an array of transitions")
            }
            for element in elements {
                route.transitions.append(
                    try enumeration(element, Transition.self, at: pointer.appending("transitions")))
            }
            route.transitions = Set(route.transitions).subtracting([route.transition]).sorted {
                $0.rawValue < $1.rawValue
            }
        }
        if let pattern = object["deepLink"] {
            let text = try string(pattern, at: pointer.appending("deepLink"))
            do { _ = try PathPattern(parsing: text) } catch {
                throw fail(pointer.appending("deepLink"), error.description)
            }
            route.deepLink = text
        }
        if let declared = object["params"] { route.params = try params(declared, at: pointer.appending("params")) }
        if let target = object["target"] {
            let at = pointer.appending("target")
            let reference = try self.object(target, at: at, known: ["plugin", "type"], required: ["type"])
            route.target = CoordinatorReference(
                plugin: try reference["plugin"].map { value throws(Failure) in
                    try name(try string(value, at: at.appending("plugin")), at: at.appending("plugin"))
                },
                type: try name(try string(reference["type"], at: at.appending("type")), at: at.appending("type")))
        }
        if let declared = object["targetParams"] {
            route.targetParams = try params(declared, at: pointer.appending("targetParams"))
        }
        if let actions = object["actions"] {
            let at = pointer.appending("actions")
            for (key, member) in try members(actions, at: at) {
                let action = try self.object(member, at: at.appending(key), known: ["params"], required: [])
                route.actions[try name(key, at: at.appending(key))] = ContractAction(
                    params: try action["params"].map { value throws(Failure) in
                        try params(value, at: at.appending(key, "params"))
                    })
            }
        }
        return route
    }

    func params(_ value: JSONValue, at pointer: JSONPointer) throws(Failure) -> [String: ContractParam] {
        var params: [String: ContractParam] = [:]
        for (key, member) in try members(value, at: pointer) {
            let at = pointer.appending(key)
            guard !key.isEmpty else { throw fail(at, "a param needs a name") }
            let param = try object(member, at: at, known: ["type", "required"], required: ["type", "required"])
            guard case .bool(let required)? = param["required"] else {
                throw fail(at.appending("required"), "expected a boolean")
            }
            params[key] = ContractParam(
                type: try enumeration(param["type"], ParamType.self, at: at.appending("type")), required: required)
        }
        return params
    }
}
