import SwitchyardProtocol
import Testing

/// `encodeBytes` writes as the value encodes itself; these pin it to the tree builder's output, byte for byte, and
/// check that uses of Codable it cannot stream still come out right.
@Suite("Streaming encoder", .timeLimit(.minutes(1)))
struct JSONStreamEncoderTests {
    static let snapshot = TreeSnapshot(
        revision: 7, root: InstanceID(1),
        instances: [
            InstanceSnapshot(
                id: InstanceID(1), plugin: "shell", type: "app", kind: .stack,
                params: ["x": 1.5, "s": "é\n\"", "n": .null],
                state: ["deep": ["a": [1, 2, ["b": false]]]],
                root: EntrySnapshot(
                    entry: EntryID(1), route: "home", transition: .root,
                    content: .screen(
                        ScreenDescriptor(
                            name: "Home", title: "Start", content: [["type": "text", "text": "é\n", "style": "title"]]))
                ),
                entries: [
                    EntrySnapshot(
                        entry: EntryID(2), route: "item", transition: .push, params: ["id": "7"],
                        content: .coordinator(InstanceID(2))),
                    EntrySnapshot(
                        entry: EntryID(3), route: "sheet", transition: .modal,
                        content: .screen(ScreenDescriptor(name: "S", props: [:])),
                        presentation: PresentationOptions(
                            detents: ["medium", "large"], interactiveDismissDisabled: true, customTransition: "zoom")),
                    EntrySnapshot(
                        entry: EntryID(5), route: "cover", transition: .fullScreen,
                        content: .screen(ScreenDescriptor(name: "C")),
                        presentation: PresentationOptions(interactiveDismissDisabled: false)),
                ]),
            InstanceSnapshot(
                id: InstanceID(2), plugin: "p", type: "t", kind: .tabs,
                parent: .init(instance: InstanceID(1), entry: EntryID(2)),
                status: .unavailable, unavailableReason: "down",
                tabs: [
                    EntrySnapshot(
                        entry: EntryID(6), route: "a", transition: .tab, content: .screen(ScreenDescriptor(name: "A")),
                        badge: "3"),
                    EntrySnapshot(
                        entry: EntryID(7), route: "b", transition: .tab, content: .screen(ScreenDescriptor(name: "B")),
                        badge: ""),
                ],
                selectedTab: "a",
                child: EntrySnapshot(
                    entry: EntryID(4), route: "w", transition: .root, content: .coordinator(InstanceID(3))),
                dynamicTabs: true),
            InstanceSnapshot(id: InstanceID(3), plugin: "p", type: "u", kind: .tabs, tabs: [], dynamicTabs: false),
        ])

    @Test("snapshots (written directly, JSONWritable) encode exactly as through Codable")
    func sameBytes() throws {
        let streamed = try JSONValueEncoder().encodeBytes(Self.snapshot)
        let built = JSONWriter.encode(try JSONValueEncoder().encode(Self.snapshot))
        #expect(String(decoding: streamed, as: UTF8.self) == String(decoding: built, as: UTF8.self))
        #expect(try JSONValueDecoder().decode(TreeSnapshot.self, from: JSONParser.parse(streamed)) == Self.snapshot)
    }

    @Test("scalars, optionals, arrays, nested arrays and empty values")
    func shapes() throws {
        struct Shapes: Encodable {
            var a: [[Int]] = [[1, 2], [], [3]]
            var b: Int? = nil
            var c: Double? = 2.5
            var d: UInt64 = .max
            var e: [String: Int] = ["k": 1]
            var f = Empty()
            var g: [Empty] = [Empty(), Empty()]
        }
        struct Empty: Encodable { func encode(to encoder: any Encoder) throws {} }
        let streamed = String(decoding: try JSONValueEncoder().encodeBytes(Shapes()), as: UTF8.self)
        #expect(streamed == JSONWriter.string(try JSONValueEncoder().encode(Shapes())))
        #expect(streamed.hasPrefix(#"{"a":[[1,2],[],[3]],"c":2.5,"#))
        #expect(String(decoding: try JSONValueEncoder().encodeBytes([Int]()), as: UTF8.self) == "[]")
        #expect(String(decoding: try JSONValueEncoder().encodeBytes("x"), as: UTF8.self) == #""x""#)
    }

    @Test("containers used out of order, a second container, superEncoder: still valid and still right")
    func fallbacks() throws {
        struct OutOfOrder: Encodable {
            enum Keys: String, CodingKey { case first, second, after }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                var first = container.nestedUnkeyedContainer(forKey: .first)
                var second = container.nestedUnkeyedContainer(forKey: .second)
                try first.encode(1)  // after `second` was opened
                try second.encode(2)
                try container.encode(3, forKey: .after)
            }
        }
        class Base: Encodable {
            enum Keys: String, CodingKey { case base }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .base)
            }
        }
        final class Derived: Base {
            enum More: String, CodingKey { case derived }
            override func encode(to encoder: any Encoder) throws {
                try super.encode(to: encoder)
                var container = encoder.container(keyedBy: More.self)
                try container.encode(2, forKey: .derived)
            }
        }
        struct Super: Encodable {
            enum Keys: String, CodingKey { case own }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .own)
                try "s".encode(to: container.superEncoder())
            }
        }
        #expect(
            try JSONParser.parse(JSONValueEncoder().encodeBytes(OutOfOrder())) == [
                "first": [1], "second": [2], "after": 3,
            ])
        #expect(try JSONParser.parse(JSONValueEncoder().encodeBytes(Derived())) == ["base": 1, "derived": 2])
        #expect(try JSONParser.parse(JSONValueEncoder().encodeBytes(Super())) == ["own": 1, "super": "s"])
    }

    @Test("an encoding error is reported, not swallowed")
    func errors() {
        struct Failing: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
        }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encodeBytes([Failing()]) }
    }
}
