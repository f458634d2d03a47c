// transcript-replayer: plays the plugin's side of a Protocol/transcripts/*.jsonl transcript against a real host.
//
// For every {"host": …} step it reads the host's next message and checks it against the transcript (a string
// "$any" matches anything; keys absent from the transcript are not checked); for every {"plugin": …} step it writes
// the message, or {"raw": "text"} verbatim. On a mismatch it reports to stderr and exits 2; at the end it reports
// "transcript-replayer: complete" and keeps answering $/ping and shutdown until exit or EOF.
//
//   transcript-replayer "$(cat TRANSCRIPT.jsonl)"     (the transcript's text; transcripts are small)
import Glibc
import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardSystem

func fail(_ text: String) -> Never {
    StandardError.write("transcript-replayer: MISMATCH \(text)\n")
    exit(2)
}

/// The host's next message. Heartbeat pings (string ids `hb-N`) may come at any time on a slow machine: they are
/// answered and skipped unless the transcript expects one there.
func readMessage(expecting step: Transcript.Step) -> JSONValue {
    while true {
        guard let line = readLine(strippingNewline: true) else {
            fail("at transcript line \(step.line): the host closed stdin, expected \(step.message)")
        }
        let value: JSONValue
        do { value = try JSONParser.parse(line) } catch {
            fail("at transcript line \(step.line): host wrote invalid JSON: \(error)")
        }
        if let id = value["id"]?.stringValue, id.hasPrefix("hb-"), value["method"] == "$/ping",
            step.message["id"]?.stringValue?.hasPrefix("hb-") != true
        {
            try? Descriptor.writeAll(1, Message.response(id: .string(id), result: [:]).encodedLine())
            continue
        }
        return value
    }
}

guard CommandLine.arguments.count == 2 else { fail("usage: transcript-replayer TRANSCRIPT-TEXT") }
let transcript: Transcript
do { transcript = try Transcript(parsing: Array(CommandLine.arguments[1].utf8)) } catch {
    fail("bad transcript: \(error)")
}

for step in transcript.steps {
    if let label = step.sync {
        StandardError.write("transcript-replayer: sync \(label)\n")
        continue
    }
    switch step.side {
    case .plugin:
        let out: [UInt8]
        if let raw = step.message["raw"]?.stringValue {
            out = Array((raw + "\n").utf8)
        } else {
            out = JSONWriter.encode(step.message) + [0x0A]
        }
        do { try Descriptor.writeAll(1, out) } catch { exit(0) }
    case .host:
        let actual = readMessage(expecting: step)
        if let problem = Transcript.mismatch(pattern: step.message, actual: actual) {
            fail("at transcript line \(step.line): \(problem)\n  host wrote: \(actual)")
        }
    case .client:
        fail("at transcript line \(step.line): a control client's message in a transcript replayed by a plugin")
    }
}
StandardError.write("transcript-replayer: complete (\(transcript.steps.count) steps)\n")

// Afterwards: a well-behaved plugin, so the host can shut it down cleanly.
while let line = readLine(strippingNewline: true) {
    guard case .message(let message, _) = MessageReader.decodeLine(Array(line.utf8)[...], lineNumber: 0) else {
        continue
    }
    switch message {
    case .request(let id, _, _):
        try? Descriptor.writeAll(1, Message.response(id: id, result: [:]).encodedLine())
    case .notification(let method, _) where method == ExitNotification.method:
        exit(0)
    default:
        break
    }
}
exit(0)
