import SwitchyardNavigation
import SwitchyardProtocol

/// Params, wrong params and deep links generated from a route's declaration.
enum Values {
    /// A value of the declared type. Strings are non-empty and plain, so a guard that refuses empty names and a
    /// link segment both take them.
    static func sample(_ type: ParamType, name: String) -> JSONValue {
        switch type {
        case .string, .any: .string("check-\(name)")
        case .integer: 1
        case .number: 1.5
        case .boolean: true
        case .object: .object(JSONObject())
        case .array: []
        }
    }

    /// A value of another JSON type, or nil for `any` (nothing is wrong for it).
    static func wrong(_ type: ParamType) -> JSONValue? {
        switch type {
        case .string: 42
        case .integer, .number: "not-a-number"
        case .boolean: "yes"
        case .object: [1, 2]
        case .array: .object(["not": "an array"])
        case .any: nil
        }
    }

    /// Params for a route: every declared param with a sample value; nil when none are declared (the route takes
    /// any params, and the host sends none).
    static func params(for route: RouteDeclaration) -> JSONValue? {
        guard let declared = route.params, !declared.isEmpty else { return nil }
        var object = JSONObject()
        for parameter in declared { object[parameter.name] = sample(parameter.type, name: parameter.name) }
        return .object(object)
    }

    /// The same params with `parameter` of the wrong type.
    static func wrongParams(for route: RouteDeclaration, breaking parameter: ParamDeclaration) -> JSONValue? {
        guard let wrongValue = wrong(parameter.type), case .object(var object)? = params(for: route) else { return nil }
        object[parameter.name] = wrongValue
        return .object(object)
    }

    /// A link that the route's pattern matches, relative to its coordinator: captures get sample values of the
    /// declared types (as text), and declared params the path does not capture go in the query. Nil when the
    /// pattern consumes nothing (`""`: there is no segment to follow).
    static func link(for route: RouteDeclaration, pattern: PathPattern) -> DeepLinkURL? {
        var segments: [String] = []
        var captured = Set<String>()
        for element in pattern.elements {
            switch element {
            case .literal(let text): segments.append(text)
            case .wildcard: segments.append("any")
            case .rest(let name):
                segments += ["rest", "of-the-link"]
                captured.insert(name)
            case .capture(let name):
                let type = route.params?.first { $0.name == name }?.type ?? .string
                segments.append(text(of: sample(type, name: name)))
                captured.insert(name)
            }
        }
        guard !segments.isEmpty else { return nil }
        var query: [String] = []
        for parameter in route.params ?? [] where !captured.contains(parameter.name) {
            query.append("\(parameter.name)=\(percentEncoded(text(of: sample(parameter.type, name: parameter.name))))")
        }
        // A path without a scheme: every segment is the coordinator's, none is taken as the URL's host.
        let url =
            segments.map(percentEncoded).joined(separator: "/")
            + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        return try? DeepLinkURL(parsing: url)
    }

    /// How a value is written in a link (the resolver converts it back to the declared type).
    static func text(of value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return JSONWriter.string(value)
    }

    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                result += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 0x0F)])"
            }
        }
        return result
    }
}

extension JSONValue {
    /// Whether an error's `data.field` names `parameter`: `id`, `params.id`, `route.params.id`...
    func namesField(_ parameter: String) -> Bool {
        guard let field = self["field"]?.stringValue else { return false }
        return field == parameter || field.hasSuffix(".\(parameter)") || field.hasSuffix("[\"\(parameter)\"]")
    }
}
