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

    /// Splits and decodes `text`, refusing a link with more query items or path segments than `limits` allow
    /// (`-32004 limitExceeded`) before decoding any of them.
    ///
    /// Linear in the link's length: every scan is over UTF-8 bytes (a `Character` scan of a 340 KB link costs
    /// grapheme breaking on every byte), and each byte is visited a bounded number of times.
    public init(parsing text: String, limits: RequestLimits = .defaults) throws(ResponseError) {
        url = text
        let slash = UInt8(ascii: "/"), ampersand = UInt8(ascii: "&")
        var rest = Substring(text)
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        var queryText: Substring = ""
        if let question = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            queryText = rest[rest.utf8.index(after: question)...]
            rest = rest[..<question]
        }
        if let colon = rest.utf8.firstIndex(of: UInt8(ascii: ":")), rest[colon...].utf8.starts(with: "://".utf8),
            rest[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }),
            !rest[..<colon].isEmpty
        {
            scheme = String(rest[..<colon])
            rest = rest[rest.utf8.index(colon, offsetBy: 3)...]
        } else {
            scheme = nil
        }
        let rawSegments = rest.utf8.split(separator: slash, omittingEmptySubsequences: true)
        guard rawSegments.count <= limits.maxPathSegments else {
            throw .limitExceeded(
                "maxPathSegments", max: limits.maxPathSegments, actual: rawSegments.count, field: "url",
                what: "path segments in one deep link")
        }
        let rawItems = queryText.utf8.split(separator: ampersand, omittingEmptySubsequences: true)
        guard rawItems.count <= limits.maxQueryItems else {
            throw .limitExceeded(
                "maxQueryItems", max: limits.maxQueryItems, actual: rawItems.count, field: "url",
                what: "query items in one deep link")
        }
        var segments: [String] = []
        segments.reserveCapacity(rawSegments.count)
        for (index, raw) in rawSegments.enumerated() {
            guard let decoded = Self.percentDecoded(Substring(raw)) else {
                throw .deepLinkInvalid(text, segment: String(Substring(raw)), index: index, "invalid percent-encoding")
            }
            segments.append(decoded)
        }
        self.segments = segments
        var query: [String: String] = [:]
        query.reserveCapacity(rawItems.count)
        for rawItem in rawItems {
            let item = Substring(rawItem)
            let key: String?, value: String?
            if let equals = item.utf8.firstIndex(of: UInt8(ascii: "=")) {
                key = Self.percentDecoded(item[..<equals], plusIsSpace: true)
                value = Self.percentDecoded(item[item.utf8.index(after: equals)...], plusIsSpace: true)
            } else {
                key = Self.percentDecoded(item, plusIsSpace: true)
                value = ""
            }
            guard let key, let value else {
                throw .deepLinkInvalid(
                    text, segment: nil, index: segments.count, "invalid percent-encoding in the query")
            }
            query[key] = value
        }
        self.query = query
    }

    static func percentDecoded(_ text: Substring, plusIsSpace: Bool = false) -> String? {
        // Most items have nothing to decode: copy them without a byte buffer.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
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
