import SwitchyardProtocol

/// One pass over a screen's content: the shape of every element (§21), the count of its nodes, and what the second
/// pass needs (the inputs by id, the action references), so an action may name an input that comes after it.
///
/// Members a type does not define are ignored (§2: receivers ignore what they do not know); an element type the
/// vocabulary does not have is refused, since a shell could not draw it.
struct ScreenContentWalker {
    /// An interactive element's action, as written: checked once every input is known.
    struct ActionReference {
        let field: String
        let name: String
        let params: JSONObject
        let inputs: [String]
    }

    private(set) var inputs: [String: (type: ParamType, field: String)] = [:]
    private(set) var actions: [ActionReference] = []
    private var nodes = 0

    mutating func walk(_ content: JSONValue) throws(ScreenContentProblem) {
        guard case .array(let elements) = content else {
            throw Self.problem("content", "must be an array of elements, found \(content.kindName)")
        }
        for (index, element) in elements.enumerated() { try self.element(element, at: "content[\(index)]") }
    }

    // MARK: - Elements

    private mutating func element(_ value: JSONValue, at field: String) throws(ScreenContentProblem) {
        try count()
        let object = try Self.object(value, at: field)
        let typeName = try Self.string(object["type"], at: field + ".type")
        guard let type = ScreenVocabulary.ElementType(rawValue: typeName) else {
            let known = ScreenVocabulary.ElementType.allCases.map(\.rawValue).joined(separator: ", ")
            throw Self.problem(field + ".type", "'\(typeName)' is not an element type (\(known))")
        }
        switch type {
        case .text:
            _ = try Self.string(object["text"], at: field + ".text")
            try Self.oneOf(object["style"], ScreenVocabulary.textStyles, at: field + ".style")
        case .list:
            let sections = try Self.array(object["sections"], at: field + ".sections")
            for (index, section) in sections.enumerated() {
                try self.section(section, at: "\(field).sections[\(index)]")
            }
        case .button:
            _ = try Self.string(object["title"], at: field + ".title")
            try Self.oneOf(object["style"], ScreenVocabulary.buttonStyles, at: field + ".style")
            try Self.oneOf(object["symbol"], ScreenVocabulary.symbols, at: field + ".symbol")
            guard let action = object["action"] else { throw Self.problem(field + ".action", "missing") }
            try self.action(action, at: field + ".action")
        case .textField, .secureField:
            try input(object, type, at: field)
            for member in ["label", "placeholder", "value"] {
                _ = try Self.optionalString(object[member], at: "\(field).\(member)")
            }
        case .toggle:
            try input(object, type, at: field)
            _ = try Self.string(object["label"], at: field + ".label")
            if let value = object["value"], value.boolValue == nil, value != .null {
                throw Self.problem(field + ".value", "must be a boolean, found \(value.kindName)")
            }
        case .picker:
            try input(object, type, at: field)
            try picker(object, at: field)
        case .divider, .spacer:
            break
        case .symbol:
            guard object["name"] != nil else { throw Self.problem(field + ".name", "missing") }
            try Self.oneOf(object["name"], ScreenVocabulary.symbols, at: field + ".name")
        }
    }

    private mutating func section(_ value: JSONValue, at field: String) throws(ScreenContentProblem) {
        try count()
        let object = try Self.object(value, at: field)
        _ = try Self.optionalString(object["header"], at: field + ".header")
        _ = try Self.optionalString(object["footer"], at: field + ".footer")
        let rows = try Self.array(object["rows"], at: field + ".rows")
        for (index, row) in rows.enumerated() { try self.row(row, at: "\(field).rows[\(index)]") }
    }

    private mutating func row(_ value: JSONValue, at field: String) throws(ScreenContentProblem) {
        try count()
        let object = try Self.object(value, at: field)
        _ = try Self.string(object["title"], at: field + ".title")
        for member in ["subtitle", "detail", "badge"] {
            _ = try Self.optionalString(object[member], at: "\(field).\(member)")
        }
        try Self.oneOf(object["symbol"], ScreenVocabulary.symbols, at: field + ".symbol")
        if let disclosure = object["disclosure"], disclosure.boolValue == nil, disclosure != .null {
            throw Self.problem(field + ".disclosure", "must be a boolean, found \(disclosure.kindName)")
        }
        if let action = object["action"], action != .null { try self.action(action, at: field + ".action") }
    }

    private mutating func picker(_ object: JSONObject, at field: String) throws(ScreenContentProblem) {
        _ = try Self.string(object["label"], at: field + ".label")
        let options = try Self.array(object["options"], at: field + ".options")
        guard !options.isEmpty else { throw Self.problem(field + ".options", "a picker needs at least one option") }
        var values = Set<String>()
        for (index, option) in options.enumerated() {
            try count()
            let at = "\(field).options[\(index)]"
            let entry = try Self.object(option, at: at)
            let value = try Self.string(entry["value"], at: at + ".value")
            _ = try Self.string(entry["title"], at: at + ".title")
            guard values.insert(value).inserted else { throw Self.problem(at + ".value", "'\(value)' is used twice") }
        }
        if let selected = try Self.optionalString(object["value"], at: field + ".value"), !values.contains(selected) {
            throw Self.problem(field + ".value", "'\(selected)' is not the value of one of the options")
        }
    }

    /// An input's id: a name, unique within the screen, which is also the param its value is sent as.
    private mutating func input(
        _ object: JSONObject, _ type: ScreenVocabulary.ElementType, at field: String
    ) throws(ScreenContentProblem) {
        let id = try Self.string(object["id"], at: field + ".id")
        guard Self.isName(id) else {
            throw Self.problem(field + ".id", "'\(id)' is not a name: letters, digits, '_', '-' and '.'")
        }
        if let other = inputs[id] {
            throw Self.problem(field + ".id", "the id '\(id)' is used twice (also at \(other.field))")
        }
        inputs[id] = (type.inputValueType ?? .string, field)
    }

    private mutating func action(_ value: JSONValue, at field: String) throws(ScreenContentProblem) {
        let object = try Self.object(value, at: field)
        let name = try Self.string(object["name"], at: field + ".name")
        var params = JSONObject()
        if let given = object["params"], given != .null { params = try Self.object(given, at: field + ".params") }
        var inputs: [String] = []
        if let given = object["inputs"], given != .null {
            for (index, input) in try Self.array(given, at: field + ".inputs").enumerated() {
                inputs.append(try Self.string(input, at: "\(field).inputs[\(index)]"))
            }
        }
        actions.append(ActionReference(field: field, name: name, params: params, inputs: inputs))
    }

    private mutating func count() throws(ScreenContentProblem) {
        nodes += 1
        guard nodes <= ScreenVocabulary.maxElements else {
            throw ScreenContentProblem(
                field: "content",
                reason: "more than \(ScreenVocabulary.maxElements) elements, sections, rows and options",
                limit: .init(name: "maxScreenElements", max: ScreenVocabulary.maxElements, actual: nodes))
        }
    }

    // MARK: - Members

    private static func problem(_ field: String, _ reason: String) -> ScreenContentProblem {
        ScreenContentProblem(field: field, reason: reason, limit: nil)
    }

    private static func object(_ value: JSONValue, at field: String) throws(ScreenContentProblem) -> JSONObject {
        guard case .object(let object) = value else {
            throw problem(field, "must be an object, found \(value.kindName)")
        }
        return object
    }

    private static func array(_ value: JSONValue?, at field: String) throws(ScreenContentProblem) -> [JSONValue] {
        guard let value else { throw problem(field, "missing") }
        guard case .array(let elements) = value else {
            throw problem(field, "must be an array, found \(value.kindName)")
        }
        return elements
    }

    private static func string(_ value: JSONValue?, at field: String) throws(ScreenContentProblem) -> String {
        guard let value else { throw problem(field, "missing") }
        guard case .string(let text) = value else { throw problem(field, "must be a string, found \(value.kindName)") }
        return text
    }

    private static func optionalString(_ value: JSONValue?, at field: String) throws(ScreenContentProblem) -> String? {
        guard let value, value != .null else { return nil }
        return try string(value, at: field)
    }

    /// An optional member whose value, when present, is one of `allowed`.
    private static func oneOf(
        _ value: JSONValue?, _ allowed: Set<String>, at field: String
    ) throws(ScreenContentProblem) {
        guard let text = try optionalString(value, at: field) else { return }
        guard allowed.contains(text) else {
            throw problem(field, "'\(text)' is not one of \(allowed.sorted().joined(separator: ", "))")
        }
    }

    private static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first != "-", first != "." else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || "_-.".unicodeScalars.contains(scalar)
        }
    }
}
