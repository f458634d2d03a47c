public import SwitchyardProtocol

/// A deep link split the way Coordinator does it: `remainingRoutes = [host] + pathComponents`, plus the query.
///
/// `switchyard://todos/42?highlight=1` → segments `["todos", "42"]`, query `["highlight": "1"]`.
/// A URL without a scheme (`todos/42`, `/todos/42`) is a path. Empty segments (`a//b`, a trailing `/`) are dropped;
/// segments and query items are percent-decoded; the fragment is ignored.
public struct DeepLinkURL: Sendable, Equatable {
    public let url: String
    public let scheme: String?
    public let segments: [String]
    public let query: [String: String]

    public init(parsing text: String) throws(ResponseError) {
        url = text
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        var queryText: Substring = ""
        if let question = rest.firstIndex(of: "?") {
            queryText = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://"),
            rest[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }),
            !rest[..<colon].isEmpty
        {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(colon, offsetBy: 3)...]
        } else {
            scheme = nil
        }
        var segments: [String] = []
        for (index, raw) in rest.split(separator: "/", omittingEmptySubsequences: true).enumerated() {
            guard let decoded = Self.percentDecoded(raw) else {
                throw .deepLinkInvalid(text, segment: String(raw), index: index, "invalid percent-encoding")
            }
            segments.append(decoded)
        }
        self.segments = segments
        var query: [String: String] = [:]
        for item in queryText.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = Self.percentDecoded(parts[0], plusIsSpace: true)
            let value = parts.count > 1 ? Self.percentDecoded(parts[1], plusIsSpace: true) : ""
            guard let key, let value else {
                throw .deepLinkInvalid(text, segment: nil, index: segments.count, "invalid percent-encoding in the query")
            }
            query[key] = value
        }
        self.query = query
    }

    static func percentDecoded(_ text: Substring, plusIsSpace: Bool = false) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else if plusIsSpace && byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
