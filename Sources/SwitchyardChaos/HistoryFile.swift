public import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem

extension History {
    /// The largest `history.jsonl` read back: a 5-minute experiment at 200 requests per second writes about 40 MiB.
    public static let maxFileBytes = 1 << 30

    /// Reads a saved `history.jsonl` (`switchyard chaos --check`). A line that is not JSON, or not an event of the
    /// schema's shape, is an error at its `file:line:column` (the manifest's format, sysexits' DATAERR); a file that
    /// cannot be read is one about the file (NOINPUT). Blank lines are skipped.
    public static func load(path: String) throws(ManifestError) -> History {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readRegularFile(path, maxBytes: maxFileBytes) } catch {
            throw ManifestError(path: path, message: "cannot read the history (\(error))", kind: .unreadable)
        }
        let source = JSONSource(path: path, bytes: bytes)
        var events: [HistoryEvent] = []
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let line = Array(bytes[start..<end])
            if line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
                events.append(try event(line, at: start, in: source))
            }
            start = end + 1
        }
        return History(events)
    }

    /// One line, parsed and decoded; an error is placed at its offset in the whole file (`lineStart` + the offset
    /// in the line), so its line and column are the file's.
    private static func event(
        _ line: [UInt8], at lineStart: Int, in file: JSONSource
    ) throws(ManifestError)
        -> HistoryEvent
    {
        let value: JSONValue
        do { value = try JSONParser.parse(line) } catch {
            throw ManifestError(
                kind: .invalid,
                [file.diagnostic("not valid JSON: \(error.reasonDescription)", at: lineStart + error.offset)])
        }
        do { return try Coding.decode(HistoryEvent.self, from: value) } catch {
            // Located within the line (a field's path would find the first line that has it), then moved to the file.
            let local = JSONSource(path: "", bytes: line).decodingDiagnostic(error)
            throw ManifestError(
                kind: .invalid,
                [
                    file.diagnostic(
                        "not a history event: \(local.message)", at: lineStart + (local.position?.offset ?? 0))
                ]
            )
        }
    }
}
