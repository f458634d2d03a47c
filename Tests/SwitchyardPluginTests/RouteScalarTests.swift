import SwitchyardProtocol
import Testing

@testable import SwitchyardPlugin

/// A route whose input is one scalar reads it straight from the param's JSON value (``RouteScalar``), and falls back
/// to the decoder when the reader refuses the value. So a reader may refuse what the decoder reads, but never read
/// a value the decoder refuses or reads otherwise.
@Suite("Swift SDK: a route's scalar input is read as the decoder reads it", .timeLimit(.minutes(1)))
struct RouteScalarTests {
    static let values: [JSONValue] = [
        .int(2), .int(-7), .int(Int64.max), .int(Int64.min), .double(2.0), .double(2.5), .double(-0.0), .double(1e300),
        .double(9.3e18), .string("2"), .string(""), .string("é"), .bool(true), .bool(false), .null, .array([.int(1)]),
        .object(["id": .int(1)]),
    ]

    static func expectLikeTheDecoder<T: Decodable & Equatable & Sendable>(
        _ type: T.Type, reads expected: [JSONValue], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reader = try #require(RouteScalar.reader(for: T.self), sourceLocation: sourceLocation)
        for value in values {
            let decoded = try? Coding.decode(T.self, from: value)
            let read: T?
            do { read = try reader(value) } catch { read = nil }
            if let read {
                #expect(read == decoded, "\(T.self) from \(value)", sourceLocation: sourceLocation)
            }
            #expect(
                (read != nil) == expected.contains(value), "\(T.self) from \(value): read \(String(describing: read))",
                sourceLocation: sourceLocation)
        }
    }

    @Test("String, Int, Int64, Double and Bool: what each reader takes, each equal to the decoder's value")
    func scalars() throws {
        try Self.expectLikeTheDecoder(String.self, reads: [.string("2"), .string(""), .string("é")])
        try Self.expectLikeTheDecoder(
            Int.self, reads: [.int(2), .int(-7), .int(Int64.max), .int(Int64.min), .double(2.0), .double(-0.0)])
        try Self.expectLikeTheDecoder(
            Int64.self, reads: [.int(2), .int(-7), .int(Int64.max), .int(Int64.min), .double(2.0), .double(-0.0)])
        try Self.expectLikeTheDecoder(
            Double.self,
            reads: [
                .int(2), .int(-7), .int(Int64.max), .int(Int64.min), .double(2.0), .double(2.5), .double(-0.0),
                .double(1e300), .double(9.3e18),
            ])
        try Self.expectLikeTheDecoder(Bool.self, reads: [.bool(true), .bool(false)])
    }

    @Test("any other input type gets no reader: the decoder reads it")
    func others() {
        #expect(RouteScalar.reader(for: [Int].self) == nil)
        #expect(RouteScalar.reader(for: Float.self) == nil)
        #expect(RouteScalar.reader(for: NoInput.self) == nil)
    }
}
