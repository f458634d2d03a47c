@testable import SwitchyardHost
import Logging
import SwitchyardProtocol
import Synchronization
import Testing

/// Log lines: timestamps at debug (ISO 8601 in UTC, with milliseconds), one JSON object per line on request.
@Suite("log format", .timeLimit(.minutes(1)))
struct LogFormatTests {
    @Test("ISO 8601 timestamps in UTC with milliseconds, across leap days, years and the epoch")
    func timestamps() {
        #expect(SwitchyardLogHandler.iso8601(millisecondsSinceEpoch: 0) == "1970-01-01T00:00:00.000Z")
        #expect(SwitchyardLogHandler.iso8601(millisecondsSinceEpoch: 951_782_400_123) == "2000-02-29T00:00:00.123Z")
        #expect(SwitchyardLogHandler.iso8601(millisecondsSinceEpoch: 1_735_689_599_999) == "2024-12-31T23:59:59.999Z")
        #expect(SwitchyardLogHandler.iso8601(millisecondsSinceEpoch: -1) == "1969-12-31T23:59:59.999Z")
    }

    static func lines(level: Logger.Level, format: LogFormat, _ body: (Logger) -> Void) -> [String] {
        let captured = Mutex<[String]>([])
        var logger = Logger(label: "switchyard") { label in
            SwitchyardLogHandler(label: label, level: level, format: format) { line in
                captured.withLock { $0.append(line) }
            }
        }
        logger.logLevel = level
        body(logger)
        return captured.withLock { $0 }
    }

    @Test("text: no timestamp at notice, a timestamp at debug; the plugin's name in brackets")
    func text() {
        let quiet = Self.lines(level: .notice, format: .text) {
            $0.notice("started", metadata: ["plugin": "todos", "pid": "42"])
        }
        #expect(quiet == ["NOTICE [todos] started pid=42\n"])
        let verbose = Self.lines(level: .debug, format: .text) { $0.debug("hop") }
        #expect(verbose.count == 1)
        #expect(
            verbose.first?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z DEBUG hop\n/) != nil, "\(verbose)")
    }

    @Test("json: one object per line with timestamp, level, label, message, plugin and metadata")
    func json() throws {
        let lines = Self.lines(level: .info, format: .json) {
            $0.warning("slow \"hop\"\nhere", metadata: ["plugin": "todos", "ms": "120"])
        }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasSuffix("}\n") && line.dropLast().allSatisfy { $0 != "\n" })
        let object = try JSONParser.parse(String(line.dropLast()))
        #expect(object["level"] == "warning")
        #expect(object["label"] == "switchyard")
        #expect(object["message"] == "slow \"hop\"\nhere")
        #expect(object["plugin"] == "todos")
        #expect(object["metadata"] == ["ms": "120"])
        #expect(object["timestamp"]?.stringValue?.hasSuffix("Z") == true)
    }
}
