import Dispatch
import Glibc
import SwitchyardSystem
import Synchronization
public import SwitchyardProtocol

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
    /// Where it sits in the session's transcript.
    let position: Int
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
    let launch: PluginLaunch
    private let child: ChildProcess
    /// Shared with the reader threads, which hold it and not the session, so a session that is dropped ends.
    private let inbox: SessionInbox
    /// When the process was started (for spawn-to-ready).
    let started: ContinuousClock.Instant

    /// Lines longer than this are written from a helper thread with a bound: a plugin that stops reading midway
    /// must not block the checker.
    private static let boundedWriteBytes = 32 << 10

    /// Starts the plugin. Throws when it cannot be spawned at all (no such program).
    init(_ launch: PluginLaunch) throws(SystemError) {
        self.launch = launch
        let inbox = SessionInbox(maxLineBytes: launch.limits.maxLineBytes)
        self.inbox = inbox
        started = ContinuousClock.now
        child = try ChildProcess(
            launch.command, environment: launch.environment, directory: launch.directory, newSession: true,
            stdout: .bytes { bytes in inbox.stdout(bytes) },
            stderr: .bytes { bytes in inbox.stderr(bytes) })
        inbox.attach(child)
    }

    deinit {
        child.signalGroup(SIGKILL)
    }

    // MARK: - Writing

    /// Writes one line (the terminator is added) and records it.
    func sendLine(_ bytes: [UInt8]) {
        inbox.state.withLock { $0.transcript.append(ExchangeLine(.sent, bytes: bytes[...])) }
        guard bytes.count > Self.boundedWriteBytes else {
            child.write(bytes + [0x0A])
            return
        }
        let child = self.child
        let written = DispatchSemaphore(value: 0)
        let writer = try? SystemThread.spawn {
            child.write(bytes + [0x0A])
            written.signal()
        }
        guard let writer else { return }
        let timeoutMs = launch.limits.requestTimeoutMs
        if written.wait(timeout: .now() + .milliseconds(timeoutMs)) == .timedOut {
            // The plugin stopped reading: the host's write queue would call it hung (§6). Killing it ends the write.
            inbox.state.withLock {
                $0.hung = $0.hung ?? "it did not read a line of \(bytes.count) bytes within \(timeoutMs) ms"
            }
            child.signalGroup(SIGKILL)
        }
        writer.join()
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
            guard inbox.ring(before: deadline) else {
                return inbox.state.withLock { state in
                    if let reply = state.answers[id] { return reply }
                    if judging { state.hung = state.hung ?? "no answer to request \(id) within \(timeoutMs) ms" }
                    return .timeout(milliseconds: timeoutMs)
                }
            }
        }
    }

    func closeStdin() { child.closeStdin() }

    /// Sends `signal` to the plugin's process group (the host's ladder, §3.7).
    func signalGroup(_ signal: Int32) { child.signalGroup(signal) }

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

    /// How many lines over maxLineBytes the plugin has written so far.
    var oversizeLineCount: Int { inbox.state.withLock { $0.oversize.count } }

    /// Where the transcript stands now (a check's exchange starts here).
    var mark: Int { inbox.state.withLock { $0.transcript.end } }

    /// The lines exchanged since `mark` (the last `limit` of them).
    func exchange(since mark: Int, limit: Int = 24) -> [ExchangeLine] {
        inbox.state.withLock { state in
            let lines = state.transcript.since(mark)
            guard lines.count > limit else { return Array(lines) }
            return [ExchangeLine(.sent, note: "… \(lines.count - limit) earlier lines", bytes: 0)] + lines.suffix(limit)
        }
    }

    /// The few lines up to (and one after) transcript position `position`: what led to a line.
    func exchange(around position: Int) -> [ExchangeLine] {
        inbox.state.withLock { $0.transcript.around(position) }
    }

    var received: [ReceivedMessage] { inbox.state.withLock { $0.received } }
    /// How many messages were read in all (``received`` keeps the first ones).
    var receivedCount: Int { inbox.state.withLock { $0.receivedCount } }
    var garbage: [SessionState.Problem] { inbox.state.withLock { $0.garbage } }
    var oversize: [SessionState.Problem] { inbox.state.withLock { $0.oversize } }
    var strayAnswers: [SessionState.Problem] { inbox.state.withLock { $0.strayAnswers } }
    var earlyRequests: [SessionState.Problem] { inbox.state.withLock { $0.early } }
    var stderrTail: [String] { inbox.state.withLock { Array($0.stderr.suffix(12)) } }

    /// The last stderr lines once the plugin has ended: waits (bounded) for it to exit and for its stderr to be read
    /// to the end, so what it wrote as it failed (a traceback) is not still in the pipe.
    func finalStderrTail(milliseconds: Int = 2_000) -> [String] {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        _ = waitForExit(milliseconds: milliseconds)
        while !inbox.state.withLock({ $0.stderrEnded }), inbox.ring(before: deadline) {}
        return stderrTail
    }

    /// Why nothing more can be asked of this process (it hung or closed its stdout), or nil while it can.
    var unusable: String? {
        inbox.state.withLock { state in
            state.hung.map { "the plugin hung earlier (\($0))" }
                ?? (state.stdoutEnded ? "the plugin closed its stdout (exited?) earlier" : nil)
        }
    }
}
