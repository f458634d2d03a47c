import Dispatch
import Glibc
import Synchronization
public import SwitchyardProtocol
import SwitchyardUV

/// How to start the plugin under check: what a manifest entry resolves to, or a bare command.
public struct PluginLaunch: Sendable {
    /// The program and its arguments (argv, never a shell). A program without a slash is looked up in `PATH`.
    public var command: [String]
    /// The plugin's whole environment (the host's explicit environment, §4).
    public var environment: [String: String]
    /// Its working directory (`nil`: this process's).
    public var directory: String?
    /// The manifest's name for the plugin (`initialize`'s `pluginName`).
    public var pluginName: String
    /// The limits announced in `initialize` and enforced on what the plugin sends (§6).
    public var limits: PluginLimits
    /// The handshake's deadline (§3.1).
    public var startTimeoutMs: Int

    public init(
        command: [String], environment: [String: String], directory: String? = nil, pluginName: String,
        limits: PluginLimits = PluginLimits(), startTimeoutMs: Int = 10_000
    ) {
        self.command = command
        self.environment = environment
        self.directory = directory
        self.pluginName = pluginName
        self.limits = limits
        self.startTimeoutMs = startTimeoutMs
    }
}

/// One line of a conversation, as the report shows it.
public struct ExchangeLine: Sendable, Equatable {
    public enum Direction: String, Sendable {
        /// Written by the checker to the plugin's stdin.
        case sent
        /// Read from the plugin's stdout.
        case received
    }

    public let direction: Direction
    /// The line (cut after ``displayLimit`` characters; ``bytes`` tells how long it really was).
    public let text: String
    /// Its length in bytes, without the terminator.
    public let bytes: Int

    /// How much of a long line a report shows.
    static let displayLimit = 400

    init(_ direction: Direction, bytes: ArraySlice<UInt8>) {
        self.direction = direction
        self.bytes = bytes.count
        let shown = String(decoding: bytes.prefix(Self.displayLimit), as: UTF8.self)
        text = bytes.count > Self.displayLimit ? shown + "… (\(bytes.count) bytes)" : shown
    }

    init(_ direction: Direction, note: String, bytes: Int) {
        self.direction = direction
        self.text = note
        self.bytes = bytes
    }
}

/// What became of a request.
enum Reply: Sendable {
    case result(JSONValue)
    case error(ResponseError)
    /// No answer within the deadline: the host would call the plugin hung (§3, §16).
    case timeout(milliseconds: Int)
    /// stdout closed (the plugin exited or closed it) before the answer.
    case ended

    var description: String {
        switch self {
        case .result(let value): "the result \(JSONWriter.string(value))"
        case .error(let error): "the error \(error.code.rawValue) \(error.code.name): \(error.message)"
        case .timeout(let milliseconds): "no answer within \(milliseconds) ms"
        case .ended: "no answer: the plugin closed its stdout (it exited?)"
        }
    }
}

/// A message the plugin sent, as read, with its raw JSON (for the schema checks).
struct ReceivedMessage: Sendable {
    let message: Message
    let raw: JSONValue
    let lineNumber: Int
    /// The method of the request this answers, when it answers one of ours.
    let answersMethod: String?
}

/// One plugin process under check, driven like the host drives it: its stdin, its stdout framed and validated as the
/// host reads it (strict JSON, the envelope, `maxLineBytes`), its stderr kept for the report, and a transcript of
/// every line each way.
///
/// Blocking by design: each session runs on a thread of its own and waits with bounds (a reader thread wakes it),
/// so a check reads as the conversation it is.
final class PluginSession: Sendable {
    private struct State {
        var framer: LineFramer
        var transcript: [ExchangeLine] = []
        /// Where each stdout line number sits in the transcript.
        var transcriptIndex: [Int: Int] = [:]
        var nextID: Int64 = 1
        var outstanding: [RequestID: String] = [:]
        var answers: [RequestID: Reply] = [:]
        var received: [ReceivedMessage] = []
        /// Lines that are not protocol messages (§1), with the line number.
        var garbage: [(line: Int, problem: String)] = []
        /// Lines over `maxLineBytes` (§6).
        var oversize: [(line: Int, length: Int)] = []
        /// Answers to ids never sent or already answered (§2).
        var strayAnswers: [(line: Int, id: String)] = []
        /// Requests the plugin sent before `initialized`, other than `$/ping` (§3.2).
        var early: [(line: Int, method: String)] = []
        var initialized = false
        var stdoutEnded = false
        var stderr: [String] = []
        /// Set by the first request that timed out: the host would have killed the plugin then (§16).
        var hung: String?
    }

    let launch: PluginLaunch
    private let child: ChildProcess
    /// Shared with the reader threads, which hold it and not the session, so a session that is dropped ends.
    private let inbox: Inbox
    /// When the process was started (for spawn-to-ready).
    let started: ContinuousClock.Instant

    /// Starts the plugin. Throws when it cannot be spawned at all (no such program).
    init(_ launch: PluginLaunch) throws(UVError) {
        self.launch = launch
        let inbox = Inbox(State(framer: LineFramer(maxLineLength: launch.limits.maxLineBytes)))
        self.inbox = inbox
        started = ContinuousClock.now
        child = try ChildProcess(
            launch.command, environment: launch.environment, directory: launch.directory, newSession: true,
            stdout: .bytes { bytes in inbox.stdout(bytes) },
            stderr: .lines { line in inbox.stderr(line) })
        inbox.attach(child)
    }

    deinit {
        child.signalGroup(SIGKILL)
    }

    // MARK: - Writing

    /// Writes one line (the terminator is added) and records it.
    func sendLine(_ bytes: [UInt8]) {
        inbox.state.withLock { $0.transcript.append(ExchangeLine(.sent, bytes: bytes[...])) }
        child.write(bytes + [0x0A])
    }

    func send(_ message: Message) {
        sendLine(Array(message.encodedLine().dropLast()))
    }

    func notify(_ method: String, _ params: JSONValue? = [:]) {
        if method == InitializedNotification.method { inbox.state.withLock { $0.initialized = true } }
        send(.notification(method: method, params: params))
    }

    /// A fresh request id, registered as outstanding for `method`.
    func nextID(for method: String) -> RequestID {
        inbox.state.withLock { state in
            let id = RequestID.number(state.nextID)
            state.nextID += 1
            state.outstanding[id] = method
            return id
        }
    }

    /// Sends a request and waits for its answer (bounded).
    func request(_ method: String, _ params: JSONValue?, timeoutMs: Int? = nil) -> Reply {
        let id = nextID(for: method)
        send(.request(id: id, method: method, params: params))
        return wait(for: id, timeoutMs: timeoutMs ?? launch.limits.requestTimeoutMs)
    }

    /// Waits up to `timeoutMs` for the answer to `id`. A request left unanswered makes the plugin hung, as the host
    /// sees it (§16), unless `judging` is false (a check that measures how long something takes).
    func wait(for id: RequestID, timeoutMs: Int, judging: Bool = true) -> Reply {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        while true {
            let (reply, ended) = inbox.state.withLock { ($0.answers[id], $0.stdoutEnded) }
            if let reply { return reply }
            if ended { return .ended }
            guard ring(before: deadline) else {
                return inbox.state.withLock { state in
                    if let reply = state.answers[id] { return reply }
                    if judging { state.hung = state.hung ?? "no answer to request \(id) within \(timeoutMs) ms" }
                    return .timeout(milliseconds: timeoutMs)
                }
            }
        }
    }

    /// Waits up to `timeoutMs` for stdout to close (after `exit` or EOF); true when it did.
    func waitForStdoutEnd(timeoutMs: Int) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        while !inbox.state.withLock({ $0.stdoutEnded }) {
            guard ring(before: deadline) else { return inbox.state.withLock { $0.stdoutEnded } }
        }
        return true
    }

    /// Waits for the reader to report something, until `deadline`; false when the deadline passed.
    private func ring(before deadline: ContinuousClock.Instant) -> Bool {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return false }
        let (seconds, attoseconds) = left.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return inbox.wake.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    func closeStdin() { child.closeStdin() }

    /// Waits up to `milliseconds` for the process to exit; its status (128 + signal), or nil if it still runs.
    func waitForExit(milliseconds: Int) -> Int32? { child.waitForExit(milliseconds: Int32(milliseconds)) }

    /// Ends the process and everything it started, and reaps it.
    func end() {
        child.closeStdin()
        if child.waitForExit(milliseconds: 0) == nil {
            child.signalGroup(SIGKILL)
            _ = child.waitForExit(milliseconds: 5_000)
        }
    }

    // MARK: - Reading what was recorded

    /// Where the transcript stands now (a check's exchange starts here).
    var mark: Int { inbox.state.withLock { $0.transcript.count } }

    /// The lines exchanged since `mark` (the last `limit` of them).
    func exchange(since mark: Int, limit: Int = 24) -> [ExchangeLine] {
        inbox.state.withLock { state in
            let lines = state.transcript[min(mark, state.transcript.count)...]
            guard lines.count > limit else { return Array(lines) }
            return [ExchangeLine(.sent, note: "… \(lines.count - limit) earlier lines", bytes: 0)] + lines.suffix(limit)
        }
    }

    /// The few lines around stdout line `line` (what led to it).
    func exchange(aroundLine line: Int) -> [ExchangeLine] {
        inbox.state.withLock { state in
            guard let index = state.transcriptIndex[line] else { return [] }
            return Array(state.transcript[max(0, index - 4)...min(state.transcript.count - 1, index + 1)])
        }
    }

    var received: [ReceivedMessage] { inbox.state.withLock { $0.received } }
    var garbage: [(line: Int, problem: String)] { inbox.state.withLock { $0.garbage } }
    var oversize: [(line: Int, length: Int)] { inbox.state.withLock { $0.oversize } }
    var strayAnswers: [(line: Int, id: String)] { inbox.state.withLock { $0.strayAnswers } }
    var earlyRequests: [(line: Int, method: String)] { inbox.state.withLock { $0.early } }
    var stderrTail: [String] { inbox.state.withLock { Array($0.stderr.suffix(12)) } }
    var hasExited: Bool { child.hasExited }

    /// Why nothing more can be asked of this process (it hung or closed its stdout), or nil while it can.
    var unusable: String? {
        inbox.state.withLock { state in
            state.hung.map { "the plugin hung earlier (\($0))" } ?? (state.stdoutEnded ? "the plugin closed its stdout (exited?) earlier" : nil)
        }
    }

    // MARK: - The reader threads

    private final class Inbox: Sendable {
        let state: Mutex<State>
        let wake = DispatchSemaphore(value: 0)
        let child = Mutex<ChildProcess?>(nil)

        init(_ state: consuming State) {
            self.state = Mutex(state)
        }

        func attach(_ process: ChildProcess) { child.withLock { $0 = process } }

        func stderr(_ line: String?) {
            guard let line else { return }
            state.withLock { state in
                state.stderr.append(String(line.prefix(4_096)))
                if state.stderr.count > 200 { state.stderr.removeFirst(100) }
            }
        }

        func stdout(_ bytes: [UInt8]?) {
            var replies: [Message] = []
            state.withLock { state in
                var events: [LineFramer.Event] = []
                if let bytes {
                    state.framer.append(bytes)
                    while let event = state.framer.next() { events.append(event) }
                } else {
                    if let last = state.framer.finish() { events.append(last) }
                    state.stdoutEnded = true
                }
                for event in events { replies += Self.take(event, into: &state) }
            }
            // The plugin's own requests are answered as a host would, outside the lock (the write may block).
            if !replies.isEmpty, let process = child.withLock({ $0 }) {
                for reply in replies {
                    process.write(reply.encodedLine())
                    state.withLock { $0.transcript.append(ExchangeLine(.sent, bytes: reply.encodedLine().dropLast())) }
                }
            }
            wake.signal()
        }

        /// Records one framed line; returns what the checker must answer (the plugin's requests).
        private static func take(_ event: LineFramer.Event, into state: inout State) -> [Message] {
            switch event {
            case .lineTooLong(let length, let lineNumber):
                state.oversize.append((lineNumber, length))
                state.transcriptIndex[lineNumber] = state.transcript.count
                state.transcript.append(ExchangeLine(
                    .received, note: "(line \(lineNumber): \(length)+ bytes, over maxLineBytes; dropped)", bytes: length))
                return []
            case .line(let bytes, let lineNumber):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return [] }
                state.transcriptIndex[lineNumber] = state.transcript.count
                state.transcript.append(ExchangeLine(.received, bytes: bytes))
                switch MessageReader.decodeLine(bytes, lineNumber: lineNumber) {
                case .violation(let violation):
                    state.garbage.append((lineNumber, violation.error.message))
                    return []
                case .message(let message, _):
                    let raw = (try? JSONParser.parse(bytes)) ?? .null
                    return record(message, raw: raw, lineNumber: lineNumber, into: &state)
                }
            }
        }

        private static func record(_ message: Message, raw: JSONValue, lineNumber: Int, into state: inout State) -> [Message] {
            switch message {
            case .response(let id, _), .errorResponse(let id?, _):
                guard let method = state.outstanding.removeValue(forKey: id) else {
                    state.strayAnswers.append((lineNumber, id.description))
                    state.received.append(ReceivedMessage(message: message, raw: raw, lineNumber: lineNumber, answersMethod: nil))
                    return []
                }
                state.received.append(ReceivedMessage(message: message, raw: raw, lineNumber: lineNumber, answersMethod: method))
                if case .response(_, let result) = message {
                    state.answers[id] = .result(result)
                } else if case .errorResponse(_, let error) = message {
                    state.answers[id] = .error(error)
                }
                return []
            case .errorResponse(nil, _):
                state.strayAnswers.append((lineNumber, "null"))
                state.received.append(ReceivedMessage(message: message, raw: raw, lineNumber: lineNumber, answersMethod: nil))
                return []
            case .notification:
                state.received.append(ReceivedMessage(message: message, raw: raw, lineNumber: lineNumber, answersMethod: nil))
                return []
            case .request(let id, let method, _):
                state.received.append(ReceivedMessage(message: message, raw: raw, lineNumber: lineNumber, answersMethod: nil))
                return [HostStandIn.answer(id: id, method: method, initialized: state.initialized, early: &state.early, line: lineNumber)]
            }
        }
    }
}

/// How the checker answers the plugin's own requests: as a host would where it can, and plainly where it cannot
/// (it holds no composed app, so navigation from plugin code is refused, not silently dropped).
enum HostStandIn {
    static func answer(id: RequestID, method: String, initialized: Bool, early: inout [(line: Int, method: String)], line: Int) -> Message {
        if method == PingRequest.method { return .response(id: id, result: [:]) }
        guard initialized else {
            early.append((line, method))
            return .errorResponse(id: id, error: ResponseError(.notInitialized, "'\(method)' before the handshake completed", data: ["method": .string(method)]))
        }
        switch method {
        case NavigateRequest.method, TreeQueryRequest.method:
            return .errorResponse(id: id, error: ResponseError(
                .notAllowed, "check-plugin runs each coordinator type on its own: '\(method)' from plugin code is not checked",
                data: ["method": .string(method)]))
        default:
            return .errorResponse(id: id, error: .methodNotFound(method))
        }
    }
}
