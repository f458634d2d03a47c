public import SwitchyardProtocol

/// A schema that cannot be used: a keyword the validator does not implement, a `$ref` that resolves to nothing, a
/// document that is not JSON.
public struct SchemaError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A JSON Schema (2020-12) validator for the subset `Protocol/schema/` uses, for checking messages against the
/// protocol's schemas (the test suite's transcripts, `switchyard check-plugin`, a plugin author's own tests).
///
/// It refuses keywords it does not implement, so a schema can never rely on a check that silently does nothing.
/// `$ref` resolves `file.json#/json/pointer` against the documents `load` gives, or `#/pointer` within a document.
public final class SchemaValidator {
    private let load: (String) throws -> JSONValue
    private var documents: [String: JSONValue] = [:]

    /// A validator over the documents `load` returns by file name (`common.json`, `initialize.json`...).
    public init(load: @escaping (String) throws -> JSONValue) { self.load = load }

    /// A validator over documents given as text, by file name.
    public convenience init(documents: [String: String]) {
        self.init { name in
            guard let text = documents[name] else { throw SchemaError("no schema document '\(name)'") }
            return try JSONParser.parse(text)
        }
    }

    /// The keywords this validator implements.
    public static let known: Set<String> = [
        "$schema", "$id", "$ref", "$defs", "$comment", "title", "description", "examples", "type", "enum", "const",
        "properties", "required", "additionalProperties", "propertyNames", "items", "minItems", "maxItems", "minimum",
        "maximum",
        "minLength", "maxLength", "pattern", "oneOf", "anyOf", "allOf", "not", "default", "deprecated",
    ]

    /// The parsed document `file` (loaded once).
    public func document(_ file: String) throws -> JSONValue {
        if let cached = documents[file] { return cached }
        let value = try load(file)
        documents[file] = value
        return value
    }

    /// Resolves `file.json#/a/b` (or `#/a/b` inside `base`) to a schema.
    public func resolve(_ reference: String, base: String) throws -> (schema: JSONValue, file: String) {
        let parts = reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let file = parts[0].isEmpty ? base : String(parts[0])
        var node = try document(file)
        if parts.count > 1 {
            for token in parts[1].split(separator: "/") {
                let key = String(token).replacing("~1", with: "/").replacing("~0", with: "~")
                guard let next = node[key] else { throw SchemaError("\(reference): no '\(key)'") }
                node = next
            }
        }
        return (node, file)
    }

    /// Checks every subschema of a document for keywords this validator does not implement.
    public func lint(_ file: String) throws {
        func walk(_ schema: JSONValue, _ path: String) throws {
            guard let object = schema.objectValue else { return }
            for key in object.keys where !Self.known.contains(key) {
                throw SchemaError("\(file): unsupported keyword '\(key)' at \(path)")
            }
            for container in ["properties", "$defs"] {
                for (name, child) in object[container]?.objectValue ?? JSONObject() {
                    try walk(child, "\(path)/\(container)/\(name)")
                }
            }
            for single in ["items", "additionalProperties", "propertyNames", "not"] {
                if let child = object[single] { try walk(child, "\(path)/\(single)") }
            }
            for list in ["oneOf", "anyOf", "allOf"] {
                for (index, child) in (object[list]?.arrayValue ?? []).enumerated() {
                    try walk(child, "\(path)/\(list)/\(index)")
                }
            }
            if let reference = object["$ref"]?.stringValue { _ = try resolve(reference, base: file) }
        }
        try walk(try document(file), "#")
    }

    /// Validation errors of `value` against the schema at `reference` (empty when valid).
    public func validate(_ value: JSONValue, against reference: String) throws -> [String] {
        let (schema, file) = try resolve(reference, base: "")
        var errors: [String] = []
        try check(value, schema, file: file, path: "$", errors: &errors)
        return errors
    }

    private func check(
        _ value: JSONValue, _ schema: JSONValue, file: String, path: String, errors: inout [String]
    ) throws {
        if case .bool(let accepts) = schema {
            if !accepts { errors.append("\(path): not allowed") }
            return
        }
        guard let object = schema.objectValue else { throw SchemaError("\(file): a schema must be an object") }
        for key in object.keys where !Self.known.contains(key) {
            throw SchemaError("\(file): unsupported schema keyword '\(key)' at \(path)")
        }
        if let reference = object["$ref"]?.stringValue {
            let (target, targetFile) = try resolve(reference, base: file)
            try check(value, target, file: targetFile, path: path, errors: &errors)
        }
        if let type = object["type"] {
            let allowed = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue ?? ""]
            if !allowed.contains(where: { Self.matches(value, type: $0) }) {
                errors.append("\(path): expected \(allowed.joined(separator: " or ")), found \(value.kindName)")
                return
            }
        }
        if let options = object["enum"]?.arrayValue, !options.contains(value) {
            errors.append("\(path): \(value) is not one of \(options)")
        }
        if let constant = object["const"], constant != value {
            errors.append("\(path): expected \(constant), found \(value)")
        }
        if case .object(let members) = value {
            for name in object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[name] == nil {
                errors.append("\(path): missing required '\(name)'")
            }
            let properties = object["properties"]?.objectValue ?? JSONObject()
            if let names = object["propertyNames"] {
                for key in members.keys {
                    try check(.string(key), names, file: file, path: "\(path) key '\(key)'", errors: &errors)
                }
            }
            for (key, member) in members {
                if let property = properties[key] {
                    try check(member, property, file: file, path: "\(path).\(key)", errors: &errors)
                } else if let additional = object["additionalProperties"] {
                    try check(member, additional, file: file, path: "\(path).\(key)", errors: &errors)
                }
            }
        }
        if case .array(let elements) = value {
            if let items = object["items"] {
                for (index, element) in elements.enumerated() {
                    try check(element, items, file: file, path: "\(path)[\(index)]", errors: &errors)
                }
            }
            if let minimum = object["minItems"]?.intValue, elements.count < minimum {
                errors.append("\(path): fewer than \(minimum) items")
            }
            if let maximum = object["maxItems"]?.intValue, elements.count > maximum {
                errors.append("\(path): more than \(maximum) items")
            }
        }
        if let number = value.doubleValue, value.boolValue == nil {
            if let minimum = object["minimum"]?.doubleValue, number < minimum {
                errors.append("\(path): below \(minimum)")
            }
            if let maximum = object["maximum"]?.doubleValue, number > maximum {
                errors.append("\(path): above \(maximum)")
            }
        }
        if case .string(let text) = value {
            if let minimum = object["minLength"]?.intValue, text.count < minimum {
                errors.append("\(path): shorter than \(minimum)")
            }
            // Counted as JSON Schema counts a string's length: in code points (a combining mark is one).
            if let maximum = object["maxLength"]?.intValue, text.unicodeScalars.count > maximum {
                errors.append("\(path): longer than \(maximum) characters")
            }
            if let pattern = object["pattern"]?.stringValue {
                let regex = try Regex(pattern)
                if (try? regex.firstMatch(in: text)) == nil {
                    errors.append("\(path): '\(text)' does not match \(pattern)")
                }
            }
        }
        if let all = object["allOf"]?.arrayValue {
            for subschema in all { try check(value, subschema, file: file, path: path, errors: &errors) }
        }
        if let any = object["anyOf"]?.arrayValue {
            var passed = false
            for subschema in any {
                var local: [String] = []
                try check(value, subschema, file: file, path: path, errors: &local)
                if local.isEmpty { passed = true; break }
            }
            if !passed { errors.append("\(path): matches none of anyOf") }
        }
        if let one = object["oneOf"]?.arrayValue {
            var passing = 0
            var reasons: [String] = []
            for subschema in one {
                var local: [String] = []
                try check(value, subschema, file: file, path: path, errors: &local)
                if local.isEmpty { passing += 1 } else { reasons.append(local.joined(separator: "; ")) }
            }
            if passing != 1 {
                errors.append(
                    "\(path): matches \(passing) of oneOf (exactly one required)\(passing == 0 ? ": " + reasons.joined(separator: " | ") : "")"
                )
            }
        }
        if let negated = object["not"] {
            var local: [String] = []
            try check(value, negated, file: file, path: path, errors: &local)
            if local.isEmpty { errors.append("\(path): must not match 'not'") }
        }
    }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): true
        case ("number", .int), ("number", .double): true
        case ("integer", .int): true
        case ("integer", .double(let number)): number.rounded() == number
        default: false
        }
    }
}
