@testable import SwitchyardProtocol
import Testing

/// Objects past the hash-index threshold behave exactly like small ones (order, last-wins, removal, equality),
/// and building, parsing, encoding and decoding them is linear (a quadratic version took seconds at 40,000 keys).
@Suite("Large JSON objects", .timeLimit(.minutes(1)))
struct LargeObjectTests {
    static let count = 5_000

    @Test("inserts, overwrites, removals and lookups keep insertion order across the index threshold")
    func indexedObject() {
        var object = JSONObject()
        for index in 0..<Self.count { object["k\(index)"] = .int(Int64(index)) }
        #expect(object.count == Self.count)
        #expect(object["k4321"] == .int(4321))
        object["k10"] = "changed"
        #expect(object.keys[10] == "k10" && object["k10"] == "changed")
        object["k0"] = nil
        #expect(object.keys.first == "k1" && object["k0"] == nil && object["k1"] == .int(1))
        #expect(object["k\(Self.count - 1)"] == .int(Int64(Self.count - 1)))
        // Down to below the threshold (from the end, then a few from the front) and back: lookups stay right.
        for index in (20..<(Self.count - 3)).reversed() { object["k\(index)"] = nil }
        for index in 1..<20 { object["k\(index)"] = nil }
        #expect(object.keys == ["k\(Self.count - 3)", "k\(Self.count - 2)", "k\(Self.count - 1)"])
        for index in 0..<40 { object["n\(index)"] = .int(Int64(index)) }
        #expect(object["n39"] == .int(39) && object["k\(Self.count - 2)"] == .int(Int64(Self.count - 2)))
    }

    @Test(
        "parsing keeps the last of duplicate keys; equality ignores order; encode and decode round-trip a big dictionary"
    )
    func roundTrips() throws {
        let text = "{" + (0..<Self.count).map { "\"k\($0 % 3_000)\":\($0)" }.joined(separator: ",") + "}"
        let parsed = try JSONParser.parse(text)
        #expect(parsed.objectValue?.count == 3_000)
        #expect(parsed["k0"] == .int(3_000) && parsed["k2999"] == .int(2_999))

        var dictionary: [String: String] = [:]
        for index in 0..<Self.count { dictionary["key\(index)"] = "value\(index)" }
        let encoded = try Coding.encode(dictionary)
        #expect(encoded.objectValue?.count == Self.count)
        #expect(try Coding.decode([String: String].self, from: encoded) == dictionary)
        let reparsed = try JSONParser.parse(JSONWriter.encode(encoded))
        #expect(reparsed == encoded)
        var reversed = JSONObject()
        for (key, value) in (encoded.objectValue ?? JSONObject()).reversed() { reversed[key] = value }
        #expect(JSONValue.object(reversed) == encoded)
        #expect(JSONValue.object(reversed).hashValue == encoded.hashValue)
    }
}
