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

    /// A member name of up to 16 printable ASCII bytes, packed into two words as ``KnownKeys`` packs the
    /// protocol's names (zero-padded, so the words alone tell names apart): a reader compares it with its own names
    /// in a few instructions, where a table of byte arrays cost about 600 per answer in retains and bounds checks.
    package struct Key: Equatable {
        let low: UInt64
        let high: UInt64

        /// The key of `name`, one of a reader's own member names; a name ``KnownKeys`` cannot pack matches nothing.
        package init(_ name: String) {
            let packed = KnownKeys.pack(name.utf8.span, from: 0)
            low = packed?.low ?? .max
            high = packed?.high ?? .max
        }

        fileprivate init(low: UInt64, high: UInt64) {
            self.low = low
            self.high = high
        }
    }

    /// A member name and its colon, as a ``Key``; nil for a name ``KnownKeys`` cannot pack, or no name.
    package static func memberKey(in span: Span<UInt8>, at index: inout Int) -> Key? {
        guard index < span.count, span[index] == UInt8(ascii: "\""),
            let packed = KnownKeys.pack(span, from: index + 1), packed.end + 1 < span.count,
            span[packed.end + 1] == UInt8(ascii: ":")
        else { return nil }
        index = packed.end + 2
        return Key(low: packed.low, high: packed.high)
    }
}
