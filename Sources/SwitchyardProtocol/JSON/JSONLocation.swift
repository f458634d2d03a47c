/// One step of a path into a JSON document: an object's key or an array's index.
public enum JSONPathComponent: Sendable, Hashable, CustomStringConvertible {
    case key(String)
    case index(Int)

    /// The path of a `Decodable`'s coding keys (an integer key is an array index).
    public static func path(_ codingPath: [any CodingKey]) -> [JSONPathComponent] {
        codingPath.map { key in key.intValue.map(JSONPathComponent.index) ?? .key(key.stringValue) }
    }

    public var description: String {
        switch self {
        case .key(let key): key
        case .index(let index): "[\(index)]"
        }
    }
}

/// A position in a text as editors and compilers count it: a 1-based line and a 1-based column (in characters),
/// with the text of that line, for `file:line:column:` diagnostics and a caret under the spot.
public struct TextPosition: Sendable, Equatable, CustomStringConvertible {
    /// The byte offset the position was computed from.
    public let offset: Int
    public let line: Int
    public let column: Int
    /// The whole line the position is on, without its terminator.
    public let lineText: String

    /// The position of byte `offset` in `bytes` (an offset past the end is the end).
    public init(offset: Int, in bytes: [UInt8]) {
        let offset = max(0, min(offset, bytes.count))
        var lineStart = 0
        var line = 1
        for index in 0..<offset where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        var lineEnd = lineStart
        while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
        if lineEnd > lineStart, bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        self.offset = offset
        self.line = line
        // Characters, not bytes: the column a caret has to reach under a line with non-ASCII text before it.
        self.column = String(decoding: bytes[lineStart..<max(lineStart, min(offset, lineEnd))], as: UTF8.self).count + 1
        self.lineText = String(decoding: bytes[lineStart..<lineEnd], as: UTF8.self)
    }

    public var description: String { "\(line):\(column)" }

    /// The line, then a caret under the column (tabs before it kept, so the caret lines up in a terminal).
    public var excerpt: String {
        let prefix = lineText.prefix(column - 1).map { $0 == "\t" ? "\t" : " " }.joined()
        return "\(lineText)\n\(prefix)^"
    }
}

extension JSONParser {
    /// Where the value at `path` is in `bytes`, a document this parser accepts: the byte offset of the value, and
    /// for an object member, of its key. Nil when the path is not in the document.
    ///
    /// For diagnostics only (an error naming a field also names its line and column): it re-scans the text, so
    /// parsing itself keeps no positions and costs nothing more. A key given twice is found where it was given
    /// last, the occurrence the parser keeps.
    public static func locate(_ path: [JSONPathComponent], in bytes: [UInt8]) -> (key: Int?, value: Int)? {
        var scanner = LocationScanner(bytes: bytes)
        scanner.skipWhitespace()
        var found: (key: Int?, value: Int) = (nil, scanner.index)
        for component in path {
            guard let member = scanner.member(component) else { return nil }
            found = member
            scanner.index = member.value
        }
        return found
    }
}

/// A forward scanner over JSON text that an accepted parse already proved valid: it only skips values and
/// finds members, so it can be simple and iterative (no recursion, whatever the nesting).
private struct LocationScanner {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    /// Past a string starting at `index` (its opening quote).
    mutating func skipString() {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                index += 1
                return
            default: index += 1
            }
        }
    }

    /// Past the value starting at `index`.
    mutating func skipValue() {
        guard index < bytes.count else { return }
        switch bytes[index] {
        case UInt8(ascii: "\""): skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    skipString()
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return
                    }
                default: break
                }
                index += 1
            }
        default:
            while index < bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09].contains(
                    bytes[index])
            {
                index += 1
            }
        }
    }

    /// The member `component` of the container starting at `index`.
    mutating func member(_ component: JSONPathComponent) -> (key: Int?, value: Int)? {
        guard index < bytes.count else { return nil }
        switch (bytes[index], component) {
        case (UInt8(ascii: "{"), .key(let wanted)):
            var found: (key: Int?, value: Int)?
            index += 1
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return found }
                let keyStart = index
                skipString()
                let key = (try? JSONParser.parse(bytes[keyStart..<index]))?.stringValue
                skipWhitespace()
                index += 1  // :
                skipWhitespace()
                if key == wanted { found = (keyStart, index) }
                skipValue()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return found }
                index += 1
            }
        case (UInt8(ascii: "["), .index(let wanted)):
            index += 1
            var position = 0
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] != UInt8(ascii: "]") else { return nil }
                if position == wanted { return (nil, index) }
                skipValue()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
                position += 1
            }
        default:
            return nil
        }
    }
}
