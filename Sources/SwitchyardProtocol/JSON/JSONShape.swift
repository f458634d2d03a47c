/// The punctuation of a message's fixed shape, read in place: the byte readers (`init?(resultBytes:maxDepth:)`) walk
/// the objects they know member by member and hand each value to ``JSONParser/value(in:at:depth:maxDepth:)``.
/// Everything here says no (false, nil) rather than throwing: a byte reader that meets anything outside its shape
/// (whitespace, an escaped or unknown member name, a duplicate) gives up, and the general path reads the line and
/// reports what is wrong, so error texts never depend on which path ran.
package enum JSONShape {
    /// Whether `byte` is at `index`, stepping past it if so.
    @inline(__always)
    package static func take(_ byte: UInt8, in span: Span<UInt8>, at index: inout Int) -> Bool {
        guard index < span.count, span[index] == byte else { return false }
        index += 1
        return true
    }

    /// After a member's value: true for `,` (another member follows), false for `}` (the object ended); nil for
    /// anything else.
    @inline(__always)
    package static func memberFollows(in span: Span<UInt8>, at index: inout Int) -> Bool? {
        if take(UInt8(ascii: ","), in: span, at: &index) { return true }
        if take(UInt8(ascii: "}"), in: span, at: &index) { return false }
        return nil
    }

    /// A member name of up to 16 bytes, packed into two words so a reader compares it with its own names in a few
    /// instructions (a table of byte arrays cost about 600 per answer in retains and bounds checks).
    package struct Key: Equatable {
        var length: Int
        var low: UInt64
        var high: UInt64

        /// The key of `name` (plain ASCII of at most 16 bytes: a reader's own member names).
        package init(_ name: String) {
            length = 0
            low = 0
            high = 0
            for byte in name.utf8 { add(byte) }
        }

        fileprivate init(length: Int, low: UInt64, high: UInt64) {
            self.length = length
            self.low = low
            self.high = high
        }

        @inline(__always)
        mutating func add(_ byte: UInt8) {
            if length < 8 {
                low |= UInt64(byte) << (8 * UInt64(length))
            } else {
                high |= UInt64(byte) << (8 * UInt64(length - 8))
            }
            length += 1
        }
    }

    /// A member name and its colon, as a ``Key``; nil for a name with an escape or over 16 bytes, or no name.
    package static func memberKey(in span: Span<UInt8>, at index: inout Int) -> Key? {
        guard index < span.count, span[index] == UInt8(ascii: "\"") else { return nil }
        // Locals and wrapping arithmetic: a `Key` built byte by byte through `add` cost about 30 instructions a byte.
        var low: UInt64 = 0
        var high: UInt64 = 0
        var length = 0
        var cursor = index &+ 1
        while cursor < span.count {
            let byte = span[cursor]
            if byte == UInt8(ascii: "\"") { break }
            guard byte != UInt8(ascii: "\\"), byte >= 0x20, length < 16 else { return nil }
            if length < 8 {
                low |= UInt64(byte) &<< (UInt64(length) &* 8)
            } else {
                high |= UInt64(byte) &<< (UInt64(length &- 8) &* 8)
            }
            length &+= 1
            cursor &+= 1
        }
        guard cursor &+ 1 < span.count, span[cursor &+ 1] == UInt8(ascii: ":") else { return nil }
        index = cursor &+ 2
        return Key(length: length, low: low, high: high)
    }
}
