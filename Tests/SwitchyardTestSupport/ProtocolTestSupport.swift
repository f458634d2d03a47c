package import SwitchyardProtocol
package import Testing

/// Pins a type's JSON: encodes `value`, compares with `json` (parsed, so formatting does not matter), and decodes it
/// back (sourcekit-lsp's `checkCoding`).
package func checkCoding<T: Codable & Equatable>(
    _ value: T, json: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let encoded = try JSONValueEncoder().encode(value)
    let expected = try JSONParser.parse(json)
    #expect(
        encoded == expected, "encoding differs:\n  got      \(encoded)\n  expected \(expected)",
        sourceLocation: sourceLocation)
    let decoded = try JSONValueDecoder().decode(T.self, from: expected)
    #expect(decoded == value, "round trip differs", sourceLocation: sourceLocation)
}

/// Feeds a byte stream to a fresh ``MessageReader`` in the given chunks and collects every event, including the
/// unterminated last line at end of stream.
package func readAll(_ chunks: [[UInt8]], maxLineLength: Int = 1 << 20) -> [MessageReader.Event] {
    var reader = MessageReader(maxLineLength: maxLineLength)
    var events: [MessageReader.Event] = []
    for chunk in chunks {
        reader.append(chunk)
        while let event = reader.next() { events.append(event) }
    }
    if let last = reader.finish() { events.append(last) }
    return events
}

/// Feeds bytes to a ``LineFramer`` in the given chunks and collects every event (after NIO's
/// `ByteToMessageDecoderVerifier`).
package func frameAll(_ chunks: [[UInt8]], maxLineLength: Int) -> [LineFramer.Event] {
    var framer = LineFramer(maxLineLength: maxLineLength)
    var events: [LineFramer.Event] = []
    for chunk in chunks {
        framer.append(chunk)
        while let event = framer.next() { events.append(event) }
    }
    if let last = framer.finish() { events.append(last) }
    return events
}

/// Every way the verifier splits a stream: all at once, one byte at a time, and split at each single point.
package func splits(of bytes: [UInt8]) -> [[[UInt8]]] {
    var result: [[[UInt8]]] = [[bytes], bytes.map { [$0] }]
    for point in 1..<max(bytes.count, 1) {
        result.append([Array(bytes[..<point]), Array(bytes[point...])])
    }
    return result
}

/// Framer events with slices turned into arrays, for comparisons independent of slice indices.
package enum FramedLine: Equatable, CustomStringConvertible {
    case line(String, Int)
    case tooLong(Int)

    package init(_ event: LineFramer.Event) {
        switch event {
        case .line(let bytes, let number): self = .line(String(decoding: bytes, as: UTF8.self), number)
        case .lineTooLong(_, let number): self = .tooLong(number)
        }
    }

    package var description: String {
        switch self {
        case .line(let text, let number): "\(number):\(text)"
        case .tooLong(let number): "\(number):<too long>"
        }
    }
}

extension ContentSnapshot {
    /// The screen's name and props alone, its title and content (§21) left out: what a test of navigation compares.
    package var nameAndProps: ScreenDescriptor? {
        guard case .screen(let screen) = self else { return nil }
        return ScreenDescriptor(name: screen.name, props: screen.props)
    }
}
