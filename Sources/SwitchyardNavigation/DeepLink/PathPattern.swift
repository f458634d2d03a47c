/// A deep-link path pattern, relative to a coordinator, in Hummingbird's vocabulary:
/// literal segments, `:name` (or `{name}`) captures one segment, `*` matches one segment, `**` matches the rest
/// (last only; captured as `**`, or its name in `**name`). The empty pattern `""` matches without consuming.
public struct PathPattern: Sendable, Equatable, CustomStringConvertible {
    public enum Element: Sendable, Equatable {
        case literal(String)
        case capture(String)
        case wildcard
        case rest(String)
    }

    public let elements: [Element]
    public let text: String
    /// For ``rank(consumed:)``, counted once: a link is ranked against every pattern of each type it passes.
    private let literals: Int
    private let endsWithRest: Bool

    public init(parsing text: String) throws(PatternError) {
        self.text = text
        var elements: [Element] = []
        let parts = text.split(separator: "/", omittingEmptySubsequences: true)
        for (index, part) in parts.enumerated() {
            if part == "**" || part.hasPrefix("**") {
                guard index == parts.count - 1 else {
                    throw PatternError(pattern: text, reason: "'**' must be the last segment")
                }
                let name = part.dropFirst(2)
                elements.append(.rest(name.isEmpty ? "**" : String(name)))
            } else if part == "*" {
                elements.append(.wildcard)
            } else if part.hasPrefix(":") {
                let name = part.dropFirst()
                guard !name.isEmpty else {
                    throw PatternError(pattern: text, reason: "a capture needs a name after ':'")
                }
                elements.append(.capture(String(name)))
            } else if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                elements.append(.capture(String(part.dropFirst().dropLast())))
            } else if part.contains("*") || part.contains(":") || part.contains("{") {
                throw PatternError(pattern: text, reason: "segment '\(part)' mixes literal text with pattern syntax")
            } else {
                elements.append(.literal(String(part)))
            }
        }
        self.elements = elements
        literals = elements.count(where: { if case .literal = $0 { true } else { false } })
        endsWithRest = elements.contains { if case .rest = $0 { true } else { false } }
        let names = captureNames
        if Set(names).count != names.count { throw PatternError(pattern: text, reason: "a capture name is used twice") }
    }

    public var description: String { text.isEmpty ? "\"\"" : text }

    /// The names the pattern captures, in order (`**` for an unnamed rest).
    public var captureNames: [String] {
        elements.compactMap { element -> String? in
            switch element {
            case .capture(let name), .rest(let name): name
            default: nil
            }
        }
    }

    /// Matches a prefix of `segments`: how many it consumes and the captured values.
    public func match(_ segments: ArraySlice<String>) -> (consumed: Int, captures: [String: String])? {
        var captures: [String: String] = [:]
        var position = segments.startIndex
        for element in elements {
            switch element {
            case .rest(let name):
                guard position < segments.endIndex else { return nil }
                captures[name] = segments[position...].joined(separator: "/")
                position = segments.endIndex
            case .literal(let literal):
                guard position < segments.endIndex, segments[position] == literal else { return nil }
                position += 1
            case .capture(let name):
                guard position < segments.endIndex else { return nil }
                captures[name] = segments[position]
                position += 1
            case .wildcard:
                guard position < segments.endIndex else { return nil }
                position += 1
            }
        }
        return (position - segments.startIndex, captures)
    }

    /// Two patterns with the same shape match exactly the same paths: an ambiguous collision.
    public var shape: String {
        elements.map { element in
            switch element {
            case .literal(let literal): "=\(literal)"
            case .capture, .wildcard: "?"
            case .rest: "**"
            }
        }.joined(separator: "/")
    }

    /// Precedence among patterns matching the same segments: more segments consumed, then more literals, then
    /// captures and wildcards over `**` (Hummingbird's trie order).
    public func rank(consumed: Int) -> (Int, Int, Int) { (consumed, literals, endsWithRest ? 0 : 1) }
}

public struct PatternError: Error, Sendable, Equatable, CustomStringConvertible {
    public let pattern: String
    public let reason: String
    public var description: String { "deep-link pattern '\(pattern)': \(reason)" }
}
