import Dispatch
import SwitchyardSystem
import Synchronization
import SwitchyardProtocol

/// The lines of a conversation, bounded: past ``capacity`` the oldest half goes (a plugin flooding its stdout), and
/// positions stay absolute, so a mark taken earlier still names the same line.
struct BoundedTranscript {
    static let capacity = 20_000
    private var lines: [ExchangeLine] = []
    private var dropped = 0

    /// The position the next line will have.
    var end: Int { dropped + lines.count }

    mutating func append(_ line: ExchangeLine) {
        if lines.count >= Self.capacity {
            lines.removeFirst(Self.capacity / 2)
            dropped += Self.capacity / 2
        }
        lines.append(line)
    }

    func since(_ mark: Int) -> ArraySlice<ExchangeLine> {
        lines[max(0, min(mark - dropped, lines.count))...]
    }

    func around(_ position: Int) -> [ExchangeLine] {
        let index = position - dropped
        guard index >= 0 && index < lines.count else { return [] }
        return Array(lines[max(0, index - 4)...min(lines.count - 1, index + 1)])
    }
}

/// What one session has read and sent so far, shared between the checker's thread and the reader threads.
struct SessionState {
    /// A line that broke a rule, where it is in the plugin's stdout and in the transcript.
    struct Problem {
        let line: Int
        let detail: String
        let position: Int
    }

    /// How many messages and problems are kept (a flood is counted, not stored).
    static let kept = 10_000

    var framer: LineFramer
    var transcript = BoundedTranscript()
    var nextID: Int64 = 1
    var outstanding: [RequestID: String] = [:]
    var answers: [RequestID: Reply] = [:]
    var received: [ReceivedMessage] = []
    var receivedCount = 0
    /// Lines that are not protocol messages (§1).
    var garbage: [Problem] = []
    /// Lines over `maxLineBytes` (§6).
    var oversize: [Problem] = []
    /// Answers to ids never sent or already answered (§2).
    var strayAnswers: [Problem] = []
    /// Requests the plugin sent before `initialized`, other than `$/ping` (§3.2).
    var early: [Problem] = []
    var initialized = false
    var stdoutEnded = false
    var stderr: [String] = []
    var stderrPartial: [UInt8] = []
    /// The plugin's stderr reached its end (it exited, or closed it).
    var stderrEnded = false
    /// Set by the first request that timed out: the host would have killed the plugin then (§16).
    var hung: String?

    mutating func keep(_ problem: Problem, in list: WritableKeyPath<SessionState, [Problem]>) {
        if self[keyPath: list].count < Self.kept { self[keyPath: list].append(problem) }
    }
}

/// The reader threads' side of a session: frames stdout exactly as the host does, records every line, answers the
/// plugin's own requests, and rings the session's doorbell.
final class SessionInbox: Sendable {
    let state: Mutex<SessionState>
    private let wake = DispatchSemaphore(value: 0)
    private let child = Mutex<ChildProcess?>(nil)

    init(maxLineBytes: Int) {
        state = Mutex(SessionState(framer: LineFramer(maxLineLength: maxLineBytes)))
    }

    func attach(_ process: ChildProcess) { child.withLock { $0 = process } }

    /// Waits for the reader to report something, until `deadline`; false when the deadline passed.
    func ring(before deadline: ContinuousClock.Instant) -> Bool {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return false }
        let (seconds, attoseconds) = left.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return wake.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    /// stderr, kept as its last lines (each cut at 4 KiB, as the host forwards them), for the report.
    func stderr(_ bytes: [UInt8]?) {
        guard let bytes else {
            state.withLock { $0.stderrEnded = true }
            wake.signal()
            return
        }
        state.withLock { state in
            for byte in bytes {
                if byte == 0x0A {
                    state.stderr.append(String(decoding: state.stderrPartial, as: UTF8.self))
                    state.stderrPartial.removeAll(keepingCapacity: true)
                    if state.stderr.count > 200 { state.stderr.removeFirst(100) }
                } else if state.stderrPartial.count < 4_096 {
                    state.stderrPartial.append(byte)
                }
            }
        }
    }

    func stdout(_ bytes: [UInt8]?) {
        let replies: [Message] = state.withLock { state in
            var events: [LineFramer.Event] = []
            if let bytes {
                state.framer.append(bytes)
                while let event = state.framer.next() { events.append(event) }
            } else {
                if let last = state.framer.finish() { events.append(last) }
                state.stdoutEnded = true
            }
            return events.flatMap { Self.take($0, into: &state) }
        }
        // The plugin's own requests are answered as a host would, outside the lock (the write may block).
        if !replies.isEmpty, let process = child.withLock({ $0 }) {
            for reply in replies {
                let line = reply.encodedLine()
                state.withLock { $0.transcript.append(ExchangeLine(.sent, bytes: line.dropLast())) }
                process.write(line)
            }
        }
        wake.signal()
    }

    /// Records one framed line; returns what the checker must answer (the plugin's requests).
    private static func take(_ event: LineFramer.Event, into state: inout SessionState) -> [Message] {
        let position = state.transcript.end
        switch event {
        case .lineTooLong(let length, let lineNumber):
            state.keep(.init(line: lineNumber, detail: "\(length)", position: position), in: \.oversize)
            state.transcript.append(
                ExchangeLine(
                    .received, note: "(line \(lineNumber): \(length)+ bytes, over maxLineBytes; dropped)", bytes: length
                ))
            return []
        case .line(let bytes, let lineNumber):
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return [] }
            state.transcript.append(ExchangeLine(.received, bytes: bytes))
            // Parsed once, kept raw for the schema checks; a line that is not a message is described by the
            // host's own reader, so the report says what the host would log.
            if let raw = try? JSONParser.parse(bytes), case .success(let message) = Message.decode(raw) {
                return record(message, raw: raw, lineNumber: lineNumber, position: position, into: &state)
            }
            if case .violation(let violation) = MessageReader.decodeLine(bytes, lineNumber: lineNumber) {
                state.keep(.init(line: lineNumber, detail: violation.error.message, position: position), in: \.garbage)
            }
            return []
        }
    }

    private static func record(
        _ message: Message, raw: JSONValue, lineNumber: Int, position: Int, into state: inout SessionState
    ) -> [Message] {
        var answered: String?
        var reply: Message?
        switch message {
        case .response(let id, _), .errorResponse(let id?, _):
            if let method = state.outstanding.removeValue(forKey: id) {
                answered = method
                if case .response(_, let result) = message { state.answers[id] = .result(result) }
                if case .errorResponse(_, let error) = message { state.answers[id] = .error(error) }
            } else {
                state.keep(.init(line: lineNumber, detail: id.description, position: position), in: \.strayAnswers)
            }
        case .errorResponse(nil, _):
            state.keep(.init(line: lineNumber, detail: "null", position: position), in: \.strayAnswers)
        case .notification:
            break
        case .request(let id, let method, _):
            if method != PingRequest.method && !state.initialized {
                state.keep(.init(line: lineNumber, detail: method, position: position), in: \.early)
            }
            reply = HostStandIn.answer(id: id, method: method, initialized: state.initialized)
        }
        state.receivedCount += 1
        if state.received.count < SessionState.kept {
            state.received.append(
                ReceivedMessage(
                    message: message, raw: raw, lineNumber: lineNumber, position: position, answersMethod: answered))
        }
        return reply.map { [$0] } ?? []
    }
}

/// How the checker answers the plugin's own requests: as a host would where it can, and plainly where it cannot
/// (it holds no composed app, so navigation from plugin code is refused, not silently dropped).
enum HostStandIn {
    static func answer(id: RequestID, method: String, initialized: Bool) -> Message {
        if method == PingRequest.method { return .response(id: id, result: [:]) }
        guard initialized else {
            return .errorResponse(
                id: id,
                error: ResponseError(
                    .notInitialized, "'\(method)' before the handshake completed", data: ["method": .string(method)]))
        }
        switch method {
        case NavigateRequest.method, TreeQueryRequest.method:
            return .errorResponse(
                id: id,
                error: ResponseError(
                    .notAllowed,
                    "check-plugin runs each coordinator type on its own: '\(method)' from plugin code is not checked",
                    data: ["method": .string(method)]))
        default:
            return .errorResponse(id: id, error: .methodNotFound(method))
        }
    }
}
