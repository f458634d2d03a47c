/// Member names the protocol itself uses (envelopes, params, answers: most keys on the wire). ``match(_:from:)``
/// returns these strings (literals: no allocation, no validation, equal to themselves by identity) instead of
/// building one per key per message.
///
/// A name is recognised by its bytes packed into two integers (little-endian, zero-padded: a key never holds a zero
/// byte here), matched by a `switch` the compiler turns into a few comparisons. The constants are generated from the
/// names; a name missing here only takes the general path.
enum KnownKeys {
    /// The known name of the member name starting at `start` (after its opening quote), and the position of its
    /// closing quote; nil for any other name, or one with escapes, spaces, control characters or non-ASCII bytes
    /// (the general path reads those, and reports their errors).
    static func match(_ s: Span<UInt8>, from start: Int) -> (name: String, end: Int)? {
        guard let packed = pack(s, from: start), packed.end < s.count, let name = name(packed.low, packed.high) else {
            return nil
        }
        return (name, packed.end)
    }

    /// The member name starting at `start`, packed into two words, and where it ends: at its closing quote, or at
    /// the end of `s`. Nil for a name over 16 bytes or with escapes, spaces, control characters or non-ASCII bytes.
    /// Shared with the byte readers' own names (``JSONShape/Key``).
    @inline(__always)
    static func pack(_ s: Span<UInt8>, from start: Int) -> (low: UInt64, high: UInt64, end: Int)? {
        var end = start
        var low: UInt64 = 0
        var high: UInt64 = 0
        while end < s.count {
            let byte = s[end]
            if byte == UInt8(ascii: "\"") { break }
            let offset = end - start
            guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "\\"), offset < 16 else { return nil }
            if offset < 8 {
                low |= UInt64(byte) << (UInt64(offset) * 8)
            } else {
                high |= UInt64(byte) << (UInt64(offset - 8) * 8)
            }
            end += 1
        }
        return (low, high, end)
    }

    static func name(_ low: UInt64, _ high: UInt64) -> String? {
        switch high {
        case 0x0:
            switch low {
            case 0x6469: "id"
            case 0x61746164: "data"
            case 0x65646F63: "code"
            case 0x656D616E: "name"
            case 0x656E696C: "line"
            case 0x65707974: "type"
            case 0x73626174: "tabs"
            case 0x746F6F72: "root"
            case 0x646C656966: "field"
            case 0x656C746974: "title"
            case 0x6574617473: "state"
            case 0x6574756F72: "route"
            case 0x6C6576656C: "level"
            case 0x726F727265: "error"
            case 0x7370657473: "steps"
            case 0x73706F7270: "props"
            case 0x74696D696C: "limit"
            case 0x646F6874656D: "method"
            case 0x6E6565726373: "screen"
            case 0x6E6967756C70: "plugin"
            case 0x6E6F73616572: "reason"
            case 0x736D61726170: "params"
            case 0x746C75736572: "result"
            case 0x746E65726170: "parent"
            case 0x6370726E6F736A: "jsonrpc"
            case 0x6567617373656D: "message"
            case 0x6E6F6973726576: "version"
            case 0x746E65746E6F63: "content"
            case 0x65636E6174736E69: "instance"
            case 0x6E6572646C696863: "children"
            case 0x6E6F697369766572: "revision"
            default: nil
            }
        case 0x73:
            switch low {
            case 0x65636E6174736E69: "instances"
            default: nil
            }
        case 0x6E6F:
            switch low {
            case 0x697469736E617274: "transition"
            default: nil
            }
        case 0x6E6F6974:
            switch low {
            case 0x61746E6573657270: "presentation"
            default: nil
            }
        case 0x73726F74:
            switch low {
            case 0x616E6964726F6F63: "coordinators"
            default: nil
            }
        case 0x6E6F6973726556:
            switch low {
            case 0x6C6F636F746F7270: "protocolVersion"
            default: nil
            }
        default: nil
        }
    }
}
