import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Nicolas Seriot's JSONTestSuite (vendored under Tests/Fixtures with its MIT licence): `y_` must parse, `n_` must
/// be rejected, `i_` may go either way but must not crash or hang.
@Suite("JSONTestSuite", .timeLimit(.minutes(1)))
struct JSONTestSuiteTests {
    static let directory = "\(packageRoot)/Tests/Fixtures/JSONTestSuite/test_parsing"
    static let files = FileSystem.listDirectory(directory).filter { $0.hasSuffix(".json") }

    /// The file's bytes with one trailing newline stripped, as the acceptance prescribes.
    static func line(_ name: String) throws -> [UInt8] {
        var bytes = try FileSystem.readFile("\(directory)/\(name)")
        if bytes.last == 0x0A { bytes.removeLast() }
        return bytes
    }

    @Test("the corpus is present and complete")
    func corpusPresent() {
        #expect(Self.files.count == 318)
        #expect(Self.files.filter { $0.hasPrefix("y_") }.count == 95)
        #expect(Self.files.filter { $0.hasPrefix("n_") }.count == 188)
    }

    @Test("every y_ file parses", arguments: files.filter { $0.hasPrefix("y_") })
    func accepts(_ name: String) throws {
        let bytes = try Self.line(name)
        #expect(throws: Never.self) { try JSONParser.parse(bytes) }
    }

    @Test("every n_ file is rejected with a parse error", arguments: files.filter { $0.hasPrefix("n_") })
    func rejects(_ name: String) throws {
        let bytes = try Self.line(name)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
    }

    @Test("i_ files neither crash nor hang", arguments: files.filter { $0.hasPrefix("i_") })
    func implementationDefined(_ name: String) throws {
        _ = try? JSONParser.parse(try Self.line(name))
    }

    @Test(
        "fed as a line, every y_ file without a raw newline parses and, not being a message, is an invalid request",
        arguments: files.filter { $0.hasPrefix("y_") })
    func yAsLine(_ name: String) throws {
        let bytes = try Self.line(name)
        guard !bytes.contains(0x0A) else { return }  // y_array_with_1_and_newline, y_object_with_newlines
        let events = readAll([bytes + [0x0A]])
        #expect(events.count == 1)
        guard case .violation(let violation) = events.first else {
            Issue.record("expected a violation, got \(events)")
            return
        }
        #expect(violation.error.code == .invalidRequest)
        #expect(violation.lineNumber == 1)
    }

    @Test(
        "fed as lines, every n_ file yields a parse error and never a message (empty lines are skipped)",
        arguments: files.filter { $0.hasPrefix("n_") })
    func nAsLine(_ name: String) throws {
        let bytes = try Self.line(name)
        let events = readAll([bytes + [0x0A]])
        var parseErrors = 0
        for event in events {
            switch event {
            case .message(let message, _): Issue.record("\(name) produced a message: \(message)")
            case .violation(let violation):
                if violation.error.code == .parseError { parseErrors += 1 }
            }
        }
        let onlyBlank = bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        #expect(parseErrors > 0 || onlyBlank, "\(name): \(events)")
    }

    @Test("100,000 nested arrays are rejected as too deep, without recursion trouble")
    func deepNesting() throws {
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        do {
            _ = try JSONParser.parse(bytes)
            Issue.record("accepted 100,000 open arrays")
        } catch {
            #expect(error.reason == .tooDeep(limit: JSONParser.defaultMaxDepth))
        }
        let closed = bytes + [UInt8](repeating: UInt8(ascii: "]"), count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(closed) }
    }
}
