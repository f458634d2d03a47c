import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// A bounded random/mutation fuzz of the host's JSON-lines parsing, run by `swift test` on every CI run (the
/// coverage-guided one is Tests/Fuzz/run-libfuzzer.sh). Inputs are real protocol lines and the JSONTestSuite
/// documents, mutated (bit flips, inserted structure bytes, deletions, duplications, splices, truncations, stray
/// newlines and CRs) and fed in random chunks.
@Suite("Fuzzing the JSON-lines reader", .timeLimit(.minutes(2)))
struct FuzzTests {
    static let corpus: [[UInt8]] = {
        var lines: [[UInt8]] = []
        for name in FileSystem.listDirectory("\(packageRoot)/Protocol/transcripts") where name.hasSuffix(".jsonl") {
            // Transcript lines wrap each message as {"host": …} or {"plugin": …}: take the message itself.
            let text = (try? FileSystem.readFile("\(packageRoot)/Protocol/transcripts/\(name)")) ?? []
            for line in text.split(separator: 0x0A) {
                guard let value = try? JSONParser.parse(Array(line)), let message = value["host"] ?? value["plugin"]
                else { continue }
                lines.append(JSONWriter.encode(message))
            }
        }
        let suite = "\(packageRoot)/Tests/Fixtures/JSONTestSuite/test_parsing"
        for name in FileSystem.listDirectory(suite) {
            if let bytes = try? FileSystem.readFile("\(suite)/\(name)") { lines.append(bytes.filter { $0 != 0x0A }) }
        }
        return lines
    }()

    static let structure = Array(#"{}[]":,\ntrue-0.e1"#.utf8) + [0x00, 0x0A, 0x0D, 0xC3, 0xA9, 0xED, 0xA0, 0x80, 0xFF]

    static func mutate(_ line: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = line
        for _ in 0..<Int(random.next() % 4 + 1) {
            let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            switch random.next() % 8 {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes.insert(structure[Int(random.next() % UInt64(structure.count))], at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int(random.next() % 16) + 1)
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            case 4:
                let other = corpus[Int(random.next() % UInt64(corpus.count))]
                bytes =
                    Array(bytes.prefix(position))
                    + Array(other.suffix(from: other.isEmpty ? 0 : Int(random.next() % UInt64(other.count))))
            case 5: bytes = Array(bytes.prefix(position))
            case 6:
                bytes.insert(
                    contentsOf: Array(repeating: UInt8(ascii: "["), count: Int(random.next() % 300)), at: position)
            default: bytes.insert(0x0A, at: position)
            }
        }
        return bytes
    }

    @Test("mutated lines in random chunks: no crash, one event per line, ordered line numbers, stable round trips")
    func mutations() throws {
        var random = SeededGenerator(seed: 0x5717_C4FD)
        // A fixed number of cases by seed, however long they take: the result never depends on the machine's load.
        var lines = 0
        var messages = 0
        var violations = 0
        for _ in 0..<600 {
            // A stream of 1 to 40 lines, each maybe mutated, maybe with CRLF, cut into random chunks.
            var stream: [UInt8] = []
            var expected = 0
            for _ in 0..<Int(random.next() % 40 + 1) {
                var line = Self.corpus[Int(random.next() % UInt64(Self.corpus.count))]
                if random.next() % 4 != 0 { line = Self.mutate(line, &random) }
                stream += line + (random.next() % 5 == 0 ? [0x0D, 0x0A] : [0x0A])
            }
            expected = stream.count { $0 == 0x0A }
            var reader = MessageReader(maxLineLength: 2_048, maxDepth: 64)
            var events: [MessageReader.Event] = []
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + Int(random.next() % 200) + 1)
                reader.append(Array(stream[offset..<end]))
                while let event = reader.next() { events.append(event) }
                offset = end
            }
            if let last = reader.finish() { events.append(last) }
            #expect(reader.linesRead == expected)
            // Blank lines may be skipped; every other line gives exactly one event, in order.
            #expect(events.count <= expected)
            var previous = 0
            for event in events {
                switch event {
                case .message(let message, let number):
                    #expect(number > previous)
                    previous = number
                    messages += 1
                    var again = MessageReader(maxLineLength: 1 << 20)
                    again.append(message.encodedLine())
                    guard case .message(let reparsed, _)? = again.next() else {
                        Issue.record("\(message) did not parse back")
                        continue
                    }
                    #expect(reparsed == message)
                case .violation(let violation):
                    #expect(violation.lineNumber > previous)
                    previous = violation.lineNumber
                    #expect(violation.error.data?["line"] == .int(Int64(violation.lineNumber)))
                    violations += 1
                }
            }
            lines += expected
        }
        #expect(lines > 10_000, "only \(lines) lines in 600 streams")
        #expect(messages > 0 && violations > 0)
    }

    @Test("random bytes, including huge nesting and long lines, never crash the reader")
    func randomBytes() {
        var random = SeededGenerator(seed: 42)
        for _ in 0..<3_000 {
            var reader = MessageReader(maxLineLength: 512, maxDepth: 32)
            let count = Int(random.next() % 2_048)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if random.next() % 3 == 0 { bytes = Array(repeating: UInt8(ascii: "{"), count: count) + [0x0A] }
            reader.append(bytes)
            while reader.next() != nil {}
            _ = reader.finish()
        }
    }
}
