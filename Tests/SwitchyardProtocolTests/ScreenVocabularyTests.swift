import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The screen vocabulary has one definition (Protocol/README.md §21): the protocol's symbol set is the schema's, and
/// the Studio bundles an icon for each symbol, no more and no fewer.
@Suite("screen vocabulary", .timeLimit(.minutes(1)))
struct ScreenVocabularyTests {
    static func text(_ path: String) throws -> String {
        String(decoding: try FileSystem.readFile("\(packageRoot)/\(path)"), as: UTF8.self)
    }

    @Test("the schema's Symbol enum and element types are the protocol's")
    func schema() throws {
        let common = try JSONParser.parse(try Self.text("Protocol/schema/common.json"))
        let symbols = common["$defs"]?["Symbol"]?["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(Set(symbols) == ScreenVocabulary.symbols)
        #expect(symbols.count == ScreenVocabulary.symbols.count)
        let types = (common["$defs"]?["ScreenElement"]?["oneOf"]?.arrayValue ?? []).compactMap {
            $0["properties"]?["type"]?["const"]?.stringValue
        }
        #expect(types == ScreenVocabulary.ElementType.allCases.map(\.rawValue))
    }

    @Test("the Studio's bundled icons are exactly the symbol set")
    func studioIcons() throws {
        let source = try Self.text("Sources/Studio/SwitchyardStudio/Page/symbols.js")
        // The keys of `SYMBOLS`: `  'name': [`, one per line.
        let names = source.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("'"), let end = trimmed.dropFirst().firstIndex(of: "'") else { return nil }
            let rest = trimmed[trimmed.index(after: end)...]
            guard rest.hasPrefix(": [") else { return nil }
            return String(trimmed[trimmed.index(after: trimmed.startIndex)..<end])
        }
        #expect(Set(names) == ScreenVocabulary.symbols, "\(Set(names).symmetricDifference(ScreenVocabulary.symbols))")
        #expect(names.count == ScreenVocabulary.symbols.count)
    }
}
