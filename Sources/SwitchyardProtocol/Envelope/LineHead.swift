/// What the first bytes of a line over the length limit say about the message it carries: its `id`, and whether it
/// is a request or an answer.
///
/// A line over the limit is never parsed (its bulk is dropped while it arrives), but every SDK writes `id` before
/// `result`, `error` or `params`, so its head still names the message. With it, an oversize answer fails the
/// request it answers at once, naming the limit, instead of leaving that request to time out and its plugin to be
/// judged hung; and an oversize request gets an error answer. The scan is lenient only in what it gives up on: a
/// head that does not show a complete `id` member at the top level before the bulk names nothing.
public struct LineHead: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `method` came first: a request (with an id) or a notification.
        case request
        /// `result` or `error` came first: an answer.
        case response
        case unknown
    }

    public let id: RequestID?
    public let kind: Kind

    public init(id: RequestID?, kind: Kind) {
        self.id = id
        self.kind = kind
    }

    /// Scans the head of a line (its first bytes, at most a few hundred) for its top-level members up to the first
    /// one that is not complete in the head.
    public init(_ head: ArraySlice<UInt8>) {
        (id, kind) = Self.scan(head)
    }

    private static func scan(_ head: ArraySlice<UInt8>) -> (RequestID?, Kind) {
        var scanner = Scanner(bytes: head)
        var id: RequestID?
        var kind = Kind.unknown
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return (id, kind) }
        while true {
            scanner.skipSpace()
            guard let key = scanner.string() else { return (id, kind) }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ":")) else { return (id, kind) }
            scanner.skipSpace()
            switch key {
            case "id":
                guard let value = scanner.idValue() else { return (id, kind) }
                id = value
            case "method":
                kind = .request
                guard scanner.skipValue() else { return (id, kind) }
            case "result", "error":
                // The bulk: whatever follows it is not in the head.
                kind = .response
                return (id, kind)
            default:
                guard scanner.skipValue() else { return (id, kind) }
            }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ",")) else { return (id, kind) }
        }
    }

    private struct Scanner {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// A string whose closing quote is in the head (escapes kept as written: member names and ids of the
        /// protocol need none).
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while let byte = current {
                if byte == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: bytes[start..<index], as: UTF8.self)
                    index += 1
                    return text
                }
                index += 1
            }
            return nil
        }

        /// An integer or string id, complete in the head (a number must be followed by a delimiter).
        mutating func idValue() -> RequestID? {
            if current == UInt8(ascii: "\"") { return string().map(RequestID.string) }
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            guard index > start, current != nil,
                let value = Int64(String(decoding: bytes[start..<index], as: UTF8.self))
            else { return nil }
            return .number(value)
        }

        /// Skips one value (nested ones by depth, strings by their quotes); false if it does not end in the head.
        mutating func skipValue() -> Bool {
            var depth = 0
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return false }
                    if depth == 0 { return true }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return true }
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                case UInt8(ascii: ","):
                    if depth == 0 { return true }
                default:
                    break
                }
                index += 1
            }
            return false
        }
    }
}
