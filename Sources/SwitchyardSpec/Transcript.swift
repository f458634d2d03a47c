public import SwitchyardProtocol

/// An example conversation from `Protocol/transcripts/*.jsonl`, replayed by the tests so the spec and the code
/// cannot drift apart.
///
/// Each line is one object:
/// - `{"host": <message>}`: a message the host writes to the plugin;
/// - `{"plugin": <message>}`: a message the plugin writes to the host;
/// - `{"client": <message>}`: a message a control client writes to the host (transcripts replayed as `control`,
///   where `host` lines are what the host writes to that client);
/// - `{"comment": "..."}`: prose, ignored.
/// - `{"sync": "label"}`: a point the replayer announces on stderr, so a test can wait for it before acting.
/// - `"invalid": true` beside `host` or `plugin` marks a message that breaks the protocol on purpose (schema
///   checks skip it).
///
/// When a transcript line is compared with a real message, a string `"$any"` matches any value, and object keys
/// absent from the transcript are not checked (so a transcript pins what the spec pins, and no more).
public struct Transcript: Sendable {
    public enum Side: String, Sendable {
        case host, plugin, client
    }

    public struct Step: Sendable {
        public let side: Side
        public let message: JSONValue
        /// 1-based line in the transcript file.
        public let line: Int
        /// The message is deliberately invalid.
        public let invalid: Bool
        /// A sync point's label (then `message` is null).
        public let sync: String?

        init(side: Side, message: JSONValue, line: Int, invalid: Bool = false, sync: String? = nil) {
            self.side = side
            self.message = message
            self.line = line
            self.invalid = invalid
            self.sync = sync
        }
    }

    public let steps: [Step]

    public init(steps: [Step]) { self.steps = steps }

    /// Parses a transcript file's bytes.
    public init(parsing bytes: [UInt8]) throws(ResponseError) {
        var steps: [Step] = []
        var number = 0
        for rawLine in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            guard !rawLine.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) else { continue }
            let value: JSONValue
            do { value = try JSONParser.parse(rawLine) } catch {
                throw ResponseError(.parseError, "transcript line \(number): \(error)")
            }
            if value["comment"] != nil { continue }
            if let label = value["sync"]?.stringValue {
                steps.append(Step(side: .plugin, message: .null, line: number, sync: label))
                continue
            }
            let invalid = value["invalid"] == .bool(true)
            if let message = value["host"] {
                steps.append(Step(side: .host, message: message, line: number, invalid: invalid))
            } else if let message = value["plugin"] {
                steps.append(Step(side: .plugin, message: message, line: number, invalid: invalid))
            } else if let message = value["client"] {
                steps.append(Step(side: .client, message: message, line: number, invalid: invalid))
            } else {
                throw ResponseError(
                    .invalidRequest, "transcript line \(number): needs 'host', 'plugin', 'client' or 'comment'")
            }
        }
        self.steps = steps
    }

    /// Whether `actual` matches `pattern`; on a mismatch, the path and the reason.
    public static func mismatch(pattern: JSONValue, actual: JSONValue, path: String = "") -> String? {
        if pattern == .string("$any") { return nil }
        switch (pattern, actual) {
        case (.object(let expected), .object(let got)):
            for (key, value) in expected {
                let here = path.isEmpty ? key : "\(path).\(key)"
                guard let member = got[key] else { return "\(here): missing" }
                if let problem = mismatch(pattern: value, actual: member, path: here) { return problem }
            }
            return nil
        case (.array(let expected), .array(let got)):
            guard expected.count == got.count else {
                return "\(path): \(got.count) elements, expected \(expected.count)"
            }
            for (index, (value, member)) in zip(expected, got).enumerated() {
                if let problem = mismatch(pattern: value, actual: member, path: "\(path)[\(index)]") { return problem }
            }
            return nil
        default:
            return pattern == actual ? nil : "\(path.isEmpty ? "message" : path): \(actual), expected \(pattern)"
        }
    }
}
