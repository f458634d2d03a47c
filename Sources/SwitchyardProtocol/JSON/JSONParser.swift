/// Why a line is not valid JSON, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case empty
        case unexpectedEnd
        case unexpectedByte(UInt8)
        case invalidUTF8
        case controlCharacterInString
        case invalidEscape
        case invalidUnicodeEscape
        case loneSurrogate
        case invalidNumber
        case numberOutOfRange
        case tooDeep(limit: Int)
        case trailingData
        case byteOrderMark
    }

    public let reason: Reason
    /// Byte offset in the line.
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reasonDescription) at byte \(offset)" }

    /// What is wrong, without where (for messages that say where as a line and column).
    public var reasonDescription: String {
        switch reason {
        case .empty: "empty input"
        case .unexpectedEnd: "unexpected end of input"
        case .unexpectedByte(let byte):
            (0x20..<0x7F).contains(byte)
                ? "unexpected character '\(Character(Unicode.Scalar(byte)))'"
                : "unexpected byte 0x\(String(byte, radix: 16, uppercase: true))"
        case .invalidUTF8: "invalid UTF-8"
        case .controlCharacterInString: "unescaped control character in string"
        case .invalidEscape: "invalid escape sequence"
        case .invalidUnicodeEscape: "invalid \\u escape"
        case .loneSurrogate: "unpaired UTF-16 surrogate in \\u escape"
        case .invalidNumber: "invalid number"
        case .numberOutOfRange: "number out of range"
        case .tooDeep(let limit): "nesting deeper than \(limit)"
        case .trailingData: "data after the JSON value"
        case .byteOrderMark: "byte order mark (JSON lines carry none)"
        }
    }
}

/// A strict RFC 8259 parser.
///
/// Strict where Foundation on Linux is lenient (`[1,]`, `01`, raw control characters, lone surrogates), bounded in
/// nesting so deep input never reaches a recursion that could overflow the stack, and fast enough for the hot path
/// (no Foundation, no intermediate `Any`).
public enum JSONParser {
    /// Nesting limit by default: far above any real message, far below a stack overflow.
    public static let defaultMaxDepth = 256

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(bytes.span, maxDepth: maxDepth)
    }

    public static func parse(
        _ bytes: ArraySlice<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError)
        -> JSONValue
    {
        try parse(bytes.span, maxDepth: maxDepth)
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    public static func parse(
        _ span: Span<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError)
        -> JSONValue
    {
        var reader = Reader(maxDepth: maxDepth)
        if span.count >= 3 && span[0] == 0xEF && span[1] == 0xBB && span[2] == 0xBF {
            throw JSONParseError(.byteOrderMark, at: 0)
        }
        reader.skipWhitespace(span)
        if reader.index == span.count { throw JSONParseError(.empty, at: 0) }
        let value = try reader.value(span, depth: 0)
        reader.skipWhitespace(span)
        if reader.index != span.count { throw JSONParseError(.trailingData, at: reader.index) }
        return value
    }
}

extension JSONParser {
    /// One value of `span` at `index` (no whitespace before it), nested `depth` levels inside its document; `index`
    /// moves past it. For byte readers that walk a message's fixed shape and parse only the values inside it
    /// (``JSONShape``): the depth limit bites where it would in the whole document.
    package static func value(
        in span: Span<UInt8>, at index: inout Int, depth: Int, maxDepth: Int
    ) throws(JSONParseError) -> JSONValue {
        var reader = Reader(maxDepth: maxDepth)
        reader.index = index
        let value = try reader.value(span, depth: depth)
        index = reader.index
        return value
    }
}

private struct Reader {
    var index = 0
    let maxDepth: Int
    /// Reused across strings with escapes.
    var scratch: [UInt8] = []

    init(maxDepth: Int) { self.maxDepth = maxDepth }

    @inline(__always)
    mutating func skipWhitespace(_ s: Span<UInt8>) {
        while index < s.count {
            let byte = s[index]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    mutating func value(_ s: Span<UInt8>, depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < s.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        switch s[index] {
        case UInt8(ascii: "{"): return try object(s, depth: depth + 1)
        case UInt8(ascii: "["): return try array(s, depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string(s))
        case UInt8(ascii: "t"):
            try literal(s, [0x74, 0x72, 0x75, 0x65])
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal(s, [0x66, 0x61, 0x6C, 0x73, 0x65])
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal(s, [0x6E, 0x75, 0x6C, 0x6C])
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number(s)
        default:
            throw JSONParseError(.unexpectedByte(s[index]), at: index)
        }
    }

    mutating func literal(_ s: Span<UInt8>, _ word: [UInt8]) throws(JSONParseError) {
        for (offset, expected) in word.enumerated() {
            guard index + offset < s.count else { throw JSONParseError(.unexpectedEnd, at: s.count) }
            let byte = s[index + offset]
            guard byte == expected else { throw JSONParseError(.unexpectedByte(byte), at: index + offset) }
        }
        index += word.count
    }

    mutating func array(_ s: Span<UInt8>, depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw JSONParseError(.tooDeep(limit: maxDepth), at: index) }
        index += 1  // [
        skipWhitespace(s)
        var elements: [JSONValue] = []
        if index < s.count && s[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace(s)
            elements.append(try value(s, depth: depth))
            skipWhitespace(s)
            guard index < s.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            switch s[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw JSONParseError(.unexpectedByte(s[index]), at: index)
            }
        }
    }

    mutating func object(_ s: Span<UInt8>, depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw JSONParseError(.tooDeep(limit: maxDepth), at: index) }
        index += 1  // {
        skipWhitespace(s)
        if index < s.count && s[index] == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject())
        }
        // Room for a protocol object's members (an envelope has four, route params five) without regrowing.
        var keys: [String] = []
        var values: [JSONValue] = []
        keys.reserveCapacity(6)
        values.reserveCapacity(6)
        while true {
            skipWhitespace(s)
            guard index < s.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            guard s[index] == UInt8(ascii: "\"") else { throw JSONParseError(.unexpectedByte(s[index]), at: index) }
            keys.append(try key(s))
            skipWhitespace(s)
            guard index < s.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            guard s[index] == UInt8(ascii: ":") else { throw JSONParseError(.unexpectedByte(s[index]), at: index) }
            index += 1
            skipWhitespace(s)
            values.append(try value(s, depth: depth))
            skipWhitespace(s)
            guard index < s.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            switch s[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(Self.makeObject(keys, values))
            default: throw JSONParseError(.unexpectedByte(s[index]), at: index)
            }
        }
    }

    /// Builds an object with unique keys (last value wins) in linear time, whatever the input.
    static func makeObject(_ keys: [String], _ values: [JSONValue]) -> JSONObject {
        if keys.count <= 8 {
            // Pairwise: cheaper than hashing at this size. Unique keys (the usual case) keep the arrays as they are.
            var unique = true
            for position in 1..<max(1, keys.count) where unique {
                for earlier in 0..<position where keys[earlier] == keys[position] {
                    unique = false
                    break
                }
            }
            if unique { return JSONObject(uniqueKeys: keys, values: values, positions: [:]) }
            var object = JSONObject(minimumCapacity: keys.count)
            for (key, value) in zip(keys, values) { object[key] = value }
            return object
        }
        var last: [String: Int] = [:]
        last.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() { last[key] = position }
        if last.count == keys.count {
            return JSONObject(uniqueKeys: keys, values: values, positions: last)
        }
        var object = JSONObject(minimumCapacity: last.count)
        for (position, key) in keys.enumerated() where last[key] == position {
            object.appendUnique(key, values[position])
        }
        return object
    }

    mutating func string(_ s: Span<UInt8>) throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        while index < s.count {
            let byte = s[index]
            if byte == UInt8(ascii: "\"") {
                let text = try Self.validated(s.extracting(start..<index), at: start)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(s, start: start) }
            if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: index) }
            index += 1
        }
        throw JSONParseError(.unexpectedEnd, at: index)
    }

    /// A member name: the protocol's own come from a table (``KnownKeys``); any other is read as a string.
    mutating func key(_ s: Span<UInt8>) throws(JSONParseError) -> String {
        guard let (name, end) = KnownKeys.match(s, from: index + 1) else { return try string(s) }
        index = end + 1
        return name
    }

    static func validated(_ bytes: Span<UInt8>, at offset: Int) throws(JSONParseError) -> String {
        do {
            return String(copying: try UTF8Span(validating: bytes))
        } catch {
            throw JSONParseError(.invalidUTF8, at: offset + error.byteOffsets.lowerBound)
        }
    }

    /// The slow path: a string with at least one escape, decoded into `scratch`.
    mutating func escapedString(_ s: Span<UInt8>, start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while index < s.count {
            let byte = s[index]
            if byte == UInt8(ascii: "\"") {
                appendRun(s, runStart..<index)
                index += 1
                let bytes = scratch
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw JSONParseError(.invalidUTF8, at: start)
                }
                return text
            }
            if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: index) }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            appendRun(s, runStart..<index)
            guard index + 1 < s.count else { throw JSONParseError(.unexpectedEnd, at: s.count) }
            let escape = s[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                let escapeStart = index - 2
                var scalar = try hex4(s)
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < s.count, s[index] == UInt8(ascii: "\\"), s[index + 1] == UInt8(ascii: "u")
                    else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
                    index += 2
                    let low = try hex4(s)
                    guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw JSONParseError(.loneSurrogate, at: escapeStart)
                }
                guard let unicode = Unicode.Scalar(scalar) else {
                    throw JSONParseError(.invalidUnicodeEscape, at: escapeStart)
                }
                scratch.append(contentsOf: String(Character(unicode)).utf8)
            default:
                throw JSONParseError(.invalidEscape, at: index - 2)
            }
            runStart = index
        }
        throw JSONParseError(.unexpectedEnd, at: index)
    }

    @inline(__always)
    mutating func appendRun(_ s: Span<UInt8>, _ range: Range<Int>) {
        var position = range.lowerBound
        while position < range.upperBound {
            scratch.append(s[position])
            position += 1
        }
    }

    mutating func hex4(_ s: Span<UInt8>) throws(JSONParseError) -> UInt32 {
        guard index + 4 <= s.count else { throw JSONParseError(.unexpectedEnd, at: s.count) }
        var result: UInt32 = 0
        for offset in 0..<4 {
            let byte = s[index + offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw JSONParseError(.invalidUnicodeEscape, at: index + offset)
            }
            result = result << 4 | digit
        }
        index += 4
        return result
    }

    mutating func number(_ s: Span<UInt8>) throws(JSONParseError) -> JSONValue {
        let start = index
        var negative = false
        if s[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < s.count else { throw JSONParseError(.invalidNumber, at: start) }
        // int part: 0 | [1-9][0-9]*
        var magnitude: UInt64 = 0
        var digits = 0
        if s[index] == UInt8(ascii: "0") {
            index += 1
            digits = 1
            if index < s.count, isDigit(s[index]) { throw JSONParseError(.invalidNumber, at: start) }
        } else if isDigit(s[index]) {
            while index < s.count, isDigit(s[index]) {
                if digits < 19 { magnitude = magnitude &* 10 &+ UInt64(s[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
        } else {
            throw JSONParseError(.invalidNumber, at: start)
        }
        var isInteger = true
        if index < s.count, s[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < s.count, isDigit(s[index]) else { throw JSONParseError(.invalidNumber, at: start) }
            while index < s.count, isDigit(s[index]) { index += 1 }
        }
        if index < s.count, s[index] == UInt8(ascii: "e") || s[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < s.count, s[index] == UInt8(ascii: "+") || s[index] == UInt8(ascii: "-") { index += 1 }
            guard index < s.count, isDigit(s[index]) else { throw JSONParseError(.invalidNumber, at: start) }
            while index < s.count, isDigit(s[index]) { index += 1 }
        }
        if isInteger && digits <= 18 {
            let value = Int64(magnitude)
            return .int(negative ? -value : value)
        }
        var text = ""
        text.reserveCapacity(index - start)
        for position in start..<index { text.unicodeScalars.append(Unicode.Scalar(s[position])) }
        if isInteger, let exact = Int64(text) { return .int(exact) }
        guard let double = Double(text) else { throw JSONParseError(.invalidNumber, at: start) }
        guard double.isFinite else { throw JSONParseError(.numberOutOfRange, at: start) }
        return .double(double)
    }

    @inline(__always)
    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
