/// A JSON-RPC error object: what went wrong, as a code a program can switch on and a sentence a person can read.
///
/// `data` carries the context that makes it actionable: for protocol errors `{plugin, line, field}`, for navigation
/// errors the instance, route or deep-link segment.
public struct ResponseError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var data: JSONValue?

    public init(_ code: ErrorCode, _ message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var description: String { "\(code.name) (\(code.rawValue)): \(message)" }

    /// `data` as an object, for adding context.
    public func adding(_ key: String, _ value: JSONValue) -> ResponseError {
        var copy = self
        var object = data?.objectValue ?? JSONObject()
        object[key] = value
        copy.data = .object(object)
        return copy
    }

    public var json: JSONValue {
        var object = JSONObject(minimumCapacity: 3)
        object.appendUnique("code", .int(Int64(code.rawValue)))
        object.appendUnique("message", .string(message))
        if let data { object.appendUnique("data", data) }
        return .object(object)
    }

    public init?(json: JSONValue) {
        guard let code = json["code"]?.intValue, let message = json["message"]?.stringValue else { return nil }
        self.init(ErrorCode(rawValue: Int(code)), message, data: json["data"])
    }
}

extension ResponseError {
    /// The error itself if it is a `ResponseError`, else an `internalError` describing it.
    public static func wrapping(_ error: any Error) -> ResponseError {
        (error as? ResponseError) ?? ResponseError(.internalError, "\(error)")
    }

    /// The plugin that must answer is starting, restarting, failed or excluded.
    public static func pluginUnavailable(_ plugin: String, _ reason: String) -> ResponseError {
        ResponseError(
            .pluginUnavailable, "plugin '\(plugin)' is unavailable: \(reason)", data: ["plugin": .string(plugin)])
    }

    public static func methodNotFound(_ method: String) -> ResponseError {
        ResponseError(.methodNotFound, "unknown method '\(method)'", data: ["method": .string(method)])
    }

    /// A decoding failure of `params`, naming the field.
    public static func invalidParams(method: String, _ error: any Error) -> ResponseError {
        let (field, reason) = describeDecodingError(error)
        var data: JSONObject = ["method": .string(method)]
        if let field { data["field"] = .string(field) }
        let location = field.map { " (field '\($0)')" } ?? ""
        return ResponseError(
            .invalidParams, "invalid params for '\(method)'\(location): \(reason)", data: .object(data))
    }
}

/// The dotted field path and a reason for a decoding error (LSP's `MessageDecodingError` mapping).
public func describeDecodingError(_ error: any Error) -> (field: String?, reason: String) {
    guard let decoding = error as? DecodingError else { return (nil, "\(error)") }
    switch decoding {
    case .keyNotFound(let key, let context):
        let path = fieldPath(context.codingPath + [key])
        return (path, "missing field '\(path)'")
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
        let path = fieldPath(context.codingPath)
        return (path.isEmpty ? nil : path, context.debugDescription)
    @unknown default:
        return (nil, "\(error)")
    }
}

extension ResponseError {
    /// What a plugin's author needs beyond the message, as indented lines to print under it: `data.traceback`
    /// (Python), `data.stack` (JavaScript), `data.description` (Swift, when it says more than the message), and
    /// `data.stderr`, the plugin's last stderr lines, which the host attaches to handshake failures and to a
    /// plugin's `internalError` (Protocol/README.md §7). Nil when `data` has none of them.
    ///
    /// The SDKs also write the traceback or stack to stderr: the stderr lines are shown without it.
    public var authorDetails: String? {
        guard let data = data?.objectValue else { return nil }
        var sections: [String] = []
        var shown: [String] = []
        for key in ["traceback", "stack", "description"] {
            guard let text = Self.text(data[key])?.trimmingNewlines, !text.isEmpty, text != message else { continue }
            sections.append("  \(key):\n" + Self.indented(text))
            shown.append(text)
        }
        if var stderr = Self.text(data["stderr"])?.trimmingNewlines {
            for text in shown {
                if text.hasSuffix(stderr) {
                    stderr = ""
                } else if stderr.hasSuffix(text) {
                    stderr = String(stderr.dropLast(text.count)).trimmingNewlines
                }
            }
            if !stderr.isEmpty {
                let plugin = data["plugin"]?.stringValue.map { " of plugin '\($0)'" } ?? ""
                sections.append("  stderr\(plugin), last lines:\n" + Self.indented(stderr))
            }
        }
        return sections.isEmpty ? nil : sections.joined(separator: "\n")
    }

    /// The description followed by ``authorDetails`` on the lines below: what a command-line tool prints.
    public var descriptionWithDetails: String {
        guard let details = authorDetails else { return description }
        return description + "\n" + details
    }

    /// A string, or an array of lines.
    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: return text
        case .array(let lines)?: return lines.compactMap(\.stringValue).joined(separator: "\n")
        default: return nil
        }
    }

    private static func indented(_ text: String) -> String {
        text.trimmingNewlines.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(
            separator: "\n")
    }
}

extension String {
    fileprivate var trimmingNewlines: String {
        var text = Substring(self)
        while text.last == "\n" || text.last == "\r" { text.removeLast() }
        while text.first == "\n" { text.removeFirst() }
        return String(text)
    }
}
