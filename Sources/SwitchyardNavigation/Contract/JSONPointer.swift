public import SwitchyardProtocol

/// A JSON pointer (RFC 6901): where a finding is in a contract document, `/types/todos/routes/todo/params/id`.
public struct JSONPointer: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The reference tokens, unescaped.
    public let tokens: [String]

    /// The pointer of these reference tokens (unescaped).
    public init(_ tokens: [String]) { self.tokens = tokens }

    /// The whole document.
    public static let root = JSONPointer([])

    /// A pointer from its text (`/a/b~1c` is `["a", "b/c"]`); nil when it does not start with `/` (and is not empty).
    public init?(parsing text: String) {
        guard !text.isEmpty else {
            self.init([])
            return
        }
        guard text.hasPrefix("/") else { return nil }
        self.init(
            text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
                String($0).replacing("~1", with: "/").replacing("~0", with: "~")
            })
    }

    /// `/types/TYPE` in a contract.
    public static func type(_ type: String) -> JSONPointer { JSONPointer(["types", type]) }
    /// `/types/TYPE/routes/ROUTE` in a contract.
    public static func route(_ type: String, _ route: String) -> JSONPointer {
        JSONPointer(["types", type, "routes", route])
    }

    /// This pointer with more tokens.
    public func appending(_ more: String...) -> JSONPointer { JSONPointer(tokens + more) }

    public var description: String {
        tokens.map { "/" + $0.replacing("~", with: "~0").replacing("/", with: "~1") }.joined()
    }

    /// The path `JSONParser.locate` takes, to find the line and column of what the pointer names.
    public var path: [JSONPathComponent] { tokens.map(JSONPathComponent.key) }

    public static func < (lhs: JSONPointer, rhs: JSONPointer) -> Bool {
        lhs.tokens.lexicographicallyPrecedes(rhs.tokens)
    }
}
