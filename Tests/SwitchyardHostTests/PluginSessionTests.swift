import Glibc
import Logging
@testable import SwitchyardHost
import SwitchyardProtocol
import SwitchyardHostTestSupport
import SwitchyardUV
import Testing

/// A plugin session's rules, driven by hand: a transport that records what the session does and a clock that moves
/// only when the test says, so every verdict is decided by the rule and nothing else — no process, no loop, no
/// wall time (spec §4, §6, §6.1).
@Suite("Plugin session on a manual clock", .timeLimit(.minutes(1)))
struct PluginSessionTests {
    // MARK: - Handshake

    @Test("the handshake: initialize with the limits, then ready and `initialized`; a silent plugin times out")
    func handshake() throws {
        let lab = try Lab()
        let initialize = try lab.transport.request(at: 0)
        #expect(initialize.method == InitializeRequest.method)
        #expect(initialize.params?["limits"]?["heartbeatIntervalMs"] == .int(1_000))
        lab.answerHandshake()
        #expect(lab.session.state == .ready)
        #expect(lab.events.contains { if case .ready = $0 { true } else { false } })
        #expect(try lab.transport.notification(at: 1).method == InitializedNotification.method)

        let silent = try Lab(answer: false)
        silent.clock.advance(by: 5_000)
        #expect(
            silent.failures.contains {
                $0.code == .timeout && $0.message.contains("no answer to 'initialize' within 5000 ms")
            })
        #expect(silent.transport.signals == [SIGKILL])
    }

    // MARK: - Heartbeat

    @Test("heartbeat: a silent plugin is pinged after the interval and killed when the ping is unanswered")
    func heartbeatKillsAHungPlugin() throws {
        let lab = try Lab.ready()
        lab.clock.advance(by: 999)
        #expect(lab.transport.requests(PingRequest.method).isEmpty)
        lab.clock.advance(by: 250)
        let pings = lab.transport.requests(PingRequest.method)
        #expect(pings.count == 1)
        lab.clock.advance(by: 2_000)
        #expect(lab.transport.signals == [SIGKILL])
        #expect(
            lab.session.killReason?.contains("no answer to the heartbeat $/ping within 2000 ms of running time") == true
        )
    }

    @Test("heartbeat: an answered ping, or any message, keeps the plugin alive")
    func heartbeatAnswered() throws {
        let lab = try Lab.ready()
        for _ in 0..<10 {
            lab.clock.advance(by: 1_250)
            for ping in lab.transport.requests(PingRequest.method) where !lab.transport.answered.contains(ping.id) {
                lab.transport.answered.insert(ping.id)
                lab.deliver(#"{"jsonrpc":"2.0","id":\#(ping.id.jsonText),"result":{}}"#)
            }
        }
        #expect(lab.transport.signals.isEmpty)
        #expect(lab.session.state == .ready)
    }

    @Test("heartbeat: time the host itself stalled (wall time without running time) never condemns the plugin")
    func hostStallIsNotThePlugins() throws {
        let lab = try Lab.ready()
        lab.clock.stall(milliseconds: 60_000)
        lab.clock.advance(by: 1_250)
        #expect(lab.transport.signals.isEmpty)
        #expect(lab.transport.requests(PingRequest.method).count == 1)
    }

    // MARK: - Deadlines

    @Test("deadlines: an unanswered request times out and the ready plugin is killed as hung")
    func deadlineExpires() throws {
        let lab = try Lab.ready(limits: PluginLimits(requestTimeoutMs: 500, heartbeatIntervalMs: 0))
        var outcome: Result<JSONValue, ResponseError>?
        lab.session.sendRaw(method: "coordinator/route", params: nil) { outcome = $0 }
        lab.clock.advance(by: 499)
        #expect(outcome == nil)
        lab.clock.advance(by: 1)
        #expect(outcome.flatMap { try? $0.get() } == nil)
        if case .failure(let error) = outcome { #expect(error.code == .timeout) } else { Issue.record("no timeout") }
        #expect(lab.session.killReason == "hung: no answer to 'coordinator/route' within 500 ms")
    }

    @Test("deadlines: an answer already read when the deadline timer fires wins; the verdict waits for the poll")
    func answerBeforeVerdict() throws {
        let lab = try Lab.ready(limits: PluginLimits(requestTimeoutMs: 500, heartbeatIntervalMs: 0))
        var outcome: Result<JSONValue, ResponseError>?
        lab.session.sendRaw(method: "coordinator/route", params: nil) { outcome = $0 }
        let id = try #require(lab.transport.requests("coordinator/route").first?.id)
        // The timer fires; before the verdict runs (after the next poll) the answer is read.
        lab.clock.fireWithoutPolling(by: 500)
        lab.deliver(#"{"jsonrpc":"2.0","id":\#(id.jsonText),"result":{"ok":true}}"#)
        lab.clock.poll()
        #expect(try outcome?.get()["ok"] == .bool(true))
        #expect(lab.transport.signals.isEmpty)
    }

    // MARK: - Admission and quarantine

    @Test(
        "admission: a request over the message rate is answered -32004, duplicate ids and too many outstanding are refused"
    )
    func admission() throws {
        let lab = try Lab.ready(
            limits: PluginLimits(
                maxMessagesPerSecond: 3, maxOutstandingRequests: 2, heartbeatIntervalMs: 0, maxProtocolErrors: 100))
        lab.deliver(#"{"jsonrpc":"2.0","id":"a","method":"tree/query","params":{}}"#)
        lab.deliver(#"{"jsonrpc":"2.0","id":"a","method":"tree/query","params":{}}"#)
        lab.deliver(#"{"jsonrpc":"2.0","id":"b","method":"tree/query","params":{}}"#)
        let answers = lab.transport.errorAnswers
        #expect(answers.map(\.id) == [.string("a")])
        #expect(answers.first?.error.code == .invalidRequest)
        #expect(answers.first?.error.message.contains("request id \"a\" is already in use") == true)
        #expect(lab.requests.map(\.id) == [.string("a"), .string("b")])
        // A fourth message in the same second is over the rate of 3.
        lab.deliver(#"{"jsonrpc":"2.0","id":"c","method":"tree/query","params":{}}"#)
        #expect(lab.transport.errorAnswers.last?.error.code == .limitExceeded)
        #expect(lab.transport.errorAnswers.last?.error.data?["limit"] == "maxMessagesPerSecond")
        // A second later the bucket has refilled, but two requests are still unanswered.
        lab.clock.advance(by: 1_000)
        lab.deliver(#"{"jsonrpc":"2.0","id":"d","method":"tree/query","params":{}}"#)
        #expect(lab.transport.errorAnswers.last?.error.data?["limit"] == "maxOutstandingRequests")
        lab.session.respond(to: .string("a"), encodedResult: Array(#"{}"#.utf8))
        lab.deliver(#"{"jsonrpc":"2.0","id":"e","method":"tree/query","params":{}}"#)
        #expect(lab.requests.map(\.id).last == .string("e"))
    }

    @Test(
        "quarantine: more than maxProtocolErrors invalid lines within 10 s kill the plugin; fewer, spread out, do not")
    func quarantine() throws {
        let spread = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0, maxProtocolErrors: 3))
        for _ in 0..<8 {
            spread.deliver("not json")
            spread.clock.advance(by: 4_000)
        }
        #expect(spread.transport.signals.isEmpty)
        let burst = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0, maxProtocolErrors: 3))
        for _ in 0..<4 { burst.deliver("not json") }
        #expect(burst.transport.signals == [SIGKILL])
        #expect(burst.session.killReason?.hasPrefix("quarantined: 4 protocol errors within 10 s") == true)
    }

    // MARK: - Write queue

    @Test(
        "write queue: over the limit new requests are refused; a queue that does not shrink for the window is a verdict"
    )
    func writeQueueStall() throws {
        let lab = try Lab.ready(
            limits: PluginLimits(heartbeatIntervalMs: 0, heartbeatTimeoutMs: 2_000), maxWriteQueueBytes: 1_000)
        lab.transport.unread = 1_500
        lab.session.notify(InitializedNotification.self, Empty())
        var refused: Result<JSONValue, ResponseError>?
        lab.session.sendRaw(method: "coordinator/route", params: nil) { refused = $0 }
        if case .failure(let error) = refused {
            #expect(error.data?["limit"] == "maxWriteQueueBytes")
        } else {
            Issue.record("not refused")
        }
        lab.clock.advance(by: 1_999)
        #expect(lab.transport.signals.isEmpty)
        lab.clock.advance(by: 1)
        #expect(lab.transport.signals == [SIGKILL])
        #expect(lab.session.killReason?.contains("nothing read for 2000 ms") == true)
    }

    @Test("write queue: a slow reader that keeps reading recovers; twice the limit is killed at once")
    func writeQueueRecoversOrOverflows() throws {
        let slow = try Lab.ready(
            limits: PluginLimits(heartbeatIntervalMs: 0, heartbeatTimeoutMs: 2_000), maxWriteQueueBytes: 1_000)
        slow.transport.unread = 1_500
        slow.session.notify(InitializedNotification.self, Empty())
        for unread in [1_400, 1_300, 1_200, 1_100] {
            slow.clock.advance(by: 1_500)
            slow.transport.unread = unread
        }
        slow.transport.unread = 100
        slow.clock.advance(by: 2_000)
        #expect(slow.transport.signals.isEmpty)

        let stuck = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0), maxWriteQueueBytes: 1_000)
        stuck.transport.unread = 1_990
        stuck.session.notify(InitializedNotification.self, Empty())
        #expect(stuck.transport.signals == [SIGKILL])
        #expect(stuck.session.killReason?.contains("twice the limit of 1000") == true)
    }

    // MARK: - Shutdown ladder

    @Test("ladder: shutdown request, exit, stdin closed, SIGTERM after the grace, SIGKILL after another")
    func ladder() throws {
        let lab = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0))
        lab.session.stop(graceMs: 300, shutdownTimeoutMs: 100)
        let shutdown = try #require(lab.transport.requests(ShutdownRequest.method).first)
        lab.deliver(#"{"jsonrpc":"2.0","id":\#(shutdown.id.jsonText),"result":{}}"#)
        #expect(
            lab.transport.lines.last.map { String(decoding: $0, as: UTF8.self) }?.contains(#""method":"exit""#) == true)
        #expect(lab.transport.inputClosed)
        lab.clock.advance(by: 299)
        #expect(lab.transport.signals.isEmpty)
        lab.clock.advance(by: 1)
        #expect(lab.transport.signals == [SIGTERM])
        lab.clock.advance(by: 300)
        #expect(lab.transport.signals == [SIGTERM, SIGKILL])
        lab.transport.end(.signaled(SIGKILL))
        guard case .terminated(let termination)? = lab.events.last else {
            Issue.record("not terminated")
            return
        }
        #expect(termination.cause == .killed("ignored SIGTERM during shutdown"))
    }

    @Test("ladder: a plugin that exits when asked ends as stopped, and pending requests fail pluginUnavailable")
    func ladderCleanExit() throws {
        let lab = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0))
        var pending: Result<JSONValue, ResponseError>?
        lab.session.sendRaw(method: "coordinator/route", params: nil) { pending = $0 }
        lab.session.stop(graceMs: 300, shutdownTimeoutMs: 100)
        lab.transport.end(.exited(0))
        guard case .terminated(let termination)? = lab.events.last else {
            Issue.record("not terminated")
            return
        }
        #expect(termination.cause == .stopped)
        if case .failure(let error) = pending {
            #expect(error.code == .pluginUnavailable)
        } else {
            Issue.record("still pending")
        }
        #expect(lab.transport.closed)
    }

    @Test("the exit can come before the last output: the streams get 200 ms to end, then the session ends anyway")
    func exitGrace() throws {
        let lab = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0))
        lab.transport.exitOnly(.signaled(SIGSEGV))
        #expect(lab.session.state == .ready)
        lab.clock.advance(by: 200)
        guard case .terminated(let termination)? = lab.events.last else {
            Issue.record("not terminated")
            return
        }
        #expect(termination.cause == .crashed)
    }

    // MARK: - stderr

    @Test("stderr: over its budget the rest of the second is discarded, never paused; one line says how much")
    func stderrBudget() throws {
        let logs = LogCapture()
        let lab = try Lab.ready(limits: PluginLimits(maxStderrBytesPerSecond: 100, heartbeatIntervalMs: 0), logs: logs)
        lab.session.errorsReceived(Array(repeating: UInt8(ascii: "x"), count: 150) + [0x0A])
        #expect(lab.transport.discarding)
        // What the transport drained and dropped until the second ends (it never stops reading).
        lab.transport.discardedErrorBytes = 10_000_000
        lab.session.errorsReceived(Array(repeating: UInt8(ascii: "y"), count: 7))
        #expect(!logs.contains("dropped"))
        lab.clock.advance(by: 1_000)
        #expect(!lab.transport.discarding)
        // 51 bytes of the first chunk, the 7 delivered while dropping, and what the transport drained.
        #expect(logs.contains("dropped 10000058 bytes in one second"))
        #expect(lab.session.droppedErrorBytes == 10_000_058)
        // Logging is not the protocol: no protocol error, so a plugin that logs too much is never quarantined for it.
        #expect(lab.violations.isEmpty)
        #expect(lab.session.state == .ready)
    }

    @Test("stdout at end of file while the process runs: killed after the exit's grace; a crash stays a crash")
    func outputEndedWhileRunning() throws {
        let grace = PluginSession.outputEndedGraceMs
        let lab = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0))
        lab.session.outputEnded()
        lab.clock.advance(by: grace - 1)
        #expect(lab.transport.signals.isEmpty)
        lab.clock.advance(by: 1)
        #expect(lab.transport.signals == [SIGKILL])
        #expect(lab.session.killReason?.contains("stdout ended") == true)

        // The grace ran out while the loop stalled, and the exit is read by the poll after the timer: an exit, not
        // a kill (libuv runs timers before it polls, so the verdict waits for the poll).
        let late = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0))
        late.session.outputEnded()
        late.clock.fireWithoutPolling(by: grace)
        late.transport.exitOnly(.exited(3))
        late.session.errorsEnded()
        late.clock.poll()
        #expect(late.transport.signals.isEmpty)
        guard case .terminated(let exited)? = late.events.last else {
            Issue.record("not terminated")
            return
        }
        #expect(exited.cause == .exitedWithError && "\(exited)".contains("exited with code 3"), "\(exited)")

        let crashed = try Lab.ready(limits: PluginLimits(heartbeatIntervalMs: 0))
        crashed.session.outputEnded()
        crashed.transport.exitOnly(.signaled(SIGSEGV))
        crashed.session.errorsEnded()
        crashed.clock.advance(by: 1_000)
        #expect(crashed.transport.signals.isEmpty)
        guard case .terminated(let termination)? = crashed.events.last else {
            Issue.record("not terminated")
            return
        }
        #expect(termination.cause == .crashed)
    }

    @Test("an answer over maxLineBytes fails its request at once, naming the limit and the line's size")
    func oversizeAnswer() throws {
        let lab = try Lab.ready(limits: PluginLimits(maxLineBytes: 1_000, heartbeatIntervalMs: 0))
        var outcome: Result<JSONValue, ResponseError>?
        lab.session.sendRaw(method: "coordinator/route", params: ["route": "big"]) { outcome = $0 }
        let request = try lab.transport.request(at: lab.transport.lines.count - 1)
        // The answer arrives in pieces; the request fails once the line is over the limit, before its end.
        let head = Array(#"{"jsonrpc":"2.0","id":\#(request.id.json),"result":{"content":{"screen":{"name":""#.utf8)
        lab.session.outputReceived(head + Array(repeating: UInt8(ascii: "x"), count: 600))
        #expect(outcome == nil)
        lab.session.outputReceived(Array(repeating: UInt8(ascii: "x"), count: 600))
        guard case .failure(let error)? = outcome else {
            Issue.record("the request did not fail: \(String(describing: outcome))")
            return
        }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("limit of 1000 bytes"))
        #expect(error.data?["bytes"]?.intValue ?? 0 > 1_000)
        #expect(error.data?["plugin"] == "p")
        #expect(lab.session.state == .ready)
    }
}

// MARK: - The lab: a session on a recording transport and a manual clock

extension PluginSessionTests {
    @Test("an upgrade's drain: called at once when nothing is pending, else once the last request has its answer")
    func drain() throws {
        let lab = try Lab.ready()
        var drained = 0
        lab.session.whenNoRequestsPending { drained += 1 }
        #expect(drained == 1)
        lab.session.sendRaw(method: "coordinator/route", params: nil) { _ in }
        lab.session.sendRaw(method: "coordinator/route", params: nil) { _ in }
        lab.session.whenNoRequestsPending { drained += 1 }
        lab.deliver(#"{"jsonrpc":"2.0","id":2,"result":{}}"#)
        #expect(drained == 1)
        lab.deliver(#"{"jsonrpc":"2.0","id":3,"result":{}}"#)
        #expect(drained == 2)
        // A plugin that ends with requests pending drains too: they fail, and nothing waits for them any more.
        lab.session.sendRaw(method: "coordinator/route", params: nil) { _ in }
        lab.session.whenNoRequestsPending { drained += 1 }
        lab.transport.end(.exited(1))
        #expect(drained == 3)
    }
}

private final class Lab {
    let transport = RecordingTransport()
    let clock = ManualClock()
    let session: PluginSession
    var events: [PluginSession.Event] = []

    init(
        limits: PluginLimits = PluginLimits(), maxWriteQueueBytes: Int = 1 << 20, answer: Bool = true,
        logs: LogCapture? = nil
    ) throws {
        let manifest = PluginManifest(name: "p", command: ["/bin/true"])
        let plugin = ResolvedPlugin(
            manifest: manifest, spawn: UVSpawnOptions(executable: "/bin/true"), limits: limits,
            maxWriteQueueBytes: maxWriteQueueBytes, startTimeoutMs: 5_000, restart: RestartPolicy(policy: .temporary))
        session = PluginSession(
            plugin: plugin, transport: transport, clock: clock,
            logger: Logger(label: "test") { label in
                guard let logs else { return SwiftLogNoOpLogHandler() }
                return SwitchyardLogHandler(label: label, level: .debug) { line in logs.append(line) }
            },
            trace: ProtocolTrace(file: nil, logs: false))
        transport.session = session
        session.onEvent = { [unowned self] event in events.append(event) }
        session.start()
    }

    static func ready(
        limits: PluginLimits = PluginLimits(), maxWriteQueueBytes: Int = 1 << 20, logs: LogCapture? = nil
    ) throws -> Lab {
        let lab = try Lab(limits: limits, maxWriteQueueBytes: maxWriteQueueBytes, logs: logs)
        lab.answerHandshake()
        return lab
    }

    func answerHandshake() {
        deliver(
            #"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"plugin":{"name":"p","version":"1"},"coordinators":[]}}"#
        )
    }

    func deliver(_ line: String) { session.outputReceived(Array((line + "\n").utf8)) }

    var failures: [ResponseError] {
        events.compactMap { if case .handshakeFailed(let error) = $0 { error } else { nil } }
    }

    var violations: [ResponseError] {
        events.compactMap { if case .violation(let error) = $0 { error } else { nil } }
    }

    var requests: [(id: RequestID, method: String)] {
        events.compactMap { if case .request(let id, let method, _) = $0 { (id, method) } else { nil } }
    }
}

/// Records what the session does to its plugin; the test plays the plugin's side through the session's sink.
private final class RecordingTransport: PluginTransport {
    weak var session: PluginSession?
    private(set) var lines: [[UInt8]] = []
    private(set) var signals: [Int32] = []
    private(set) var inputClosed = false
    private(set) var discarding = false
    private(set) var closed = false
    var answered: Set<RequestID> = []
    /// What the plugin has not read yet, as the test decides.
    var unread = 0

    func start(_ sink: any PluginTransportSink) throws(UVError) {}
    var pid: Int32 { 4242 }
    var canWrite: Bool { !inputClosed }
    var queuedBytes: Int { unread }
    func write(_ bytes: [UInt8]) throws(UVError) {
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            lines.append(Array(bytes[start..<index]))
            start = index + 1
        }
    }
    func cork() {}
    func uncork() {}
    func closeInput() { inputClosed = true }
    func signal(_ number: Int32) { signals.append(number) }
    func killStragglers() {}
    /// The transport drains what the plugin writes while told to discard; the test says how much that was.
    func discardErrors() { discarding = true }
    func keepErrors() { discarding = false }
    var discardedErrorBytes = 0
    func readPendingErrors() {}
    func close() { closed = true }

    /// The process exits and its streams end.
    func end(_ status: TerminationStatus) {
        session?.exited(status)
        session?.outputEnded()
        session?.errorsEnded()
    }

    /// The process exits; its streams have not ended yet.
    func exitOnly(_ status: TerminationStatus) { session?.exited(status) }

    private var messages: [Message] {
        lines.compactMap { line in
            if case .message(let message, _) = MessageReader.decodeLine(line[...], lineNumber: 1) {
                message
            } else {
                nil
            }
        }
    }

    func request(at index: Int) throws -> (id: RequestID, method: String, params: JSONValue?) {
        guard case .request(let id, let method, let params) = messages[index] else {
            throw TestError("message \(index) is not a request")
        }
        return (id, method, params)
    }

    func notification(at index: Int) throws -> (method: String, params: JSONValue?) {
        guard case .notification(let method, let params) = messages[index] else {
            throw TestError("message \(index) is not a notification")
        }
        return (method, params)
    }

    func requests(_ method: String) -> [(id: RequestID, params: JSONValue?)] {
        messages.compactMap { if case .request(let id, method, let params) = $0 { (id, params) } else { nil } }
    }

    var errorAnswers: [(id: RequestID, error: ResponseError)] {
        messages.compactMap { if case .errorResponse(let id?, let error) = $0 { (id, error) } else { nil } }
    }
}

/// Time that moves only when the test says. `advance` fires what is due, then runs what waited for the poll, as
/// the loop does; `stall` moves the wall clock alone, as the host's own stall does.
private final class ManualClock: PluginClock {
    private(set) var runningNow: UInt64 = 10_000
    private(set) var wallNow: UInt64 = 10_000
    var nanoseconds: UInt64 { runningNow * 1_000_000 }
    var onFire: (SessionTimer) -> Void = { _ in }
    private var armed: [SessionTimer: (due: UInt64, repeatMs: UInt64?)] = [:]
    private var afterPoll: [() -> Void] = []

    func arm(_ timer: SessionTimer, afterMs milliseconds: UInt64, repeatMs: UInt64?) {
        armed[timer] = (runningNow + milliseconds, repeatMs)
    }

    func cancel(_ timer: SessionTimer) { armed[timer] = nil }

    func afterNextPoll(_ job: @escaping () -> Void) { afterPoll.append(job) }

    func close() { armed.removeAll() }

    func advance(by milliseconds: UInt64) { move(by: milliseconds, polling: true) }

    /// Moves time and fires what is due, in order, without the poll that would run the verdicts.
    func fireWithoutPolling(by milliseconds: UInt64) { move(by: milliseconds, polling: false) }

    private func move(by milliseconds: UInt64, polling: Bool) {
        let target = runningNow + milliseconds
        while let next = armed.filter({ $0.value.due <= target }).min(by: { $0.value.due < $1.value.due }) {
            wallNow += next.value.due - runningNow
            runningNow = next.value.due
            if let repeatMs = next.value.repeatMs {
                armed[next.key] = (runningNow + max(1, repeatMs), repeatMs)
            } else {
                armed[next.key] = nil
            }
            onFire(next.key)
            if polling { poll() }
        }
        wallNow += target - runningNow
        runningNow = target
        if polling { poll() }
    }

    func poll() {
        while !afterPoll.isEmpty {
            let jobs = afterPoll
            afterPoll.removeAll()
            for job in jobs { job() }
        }
    }

    func stall(milliseconds: UInt64) { wallNow += milliseconds }
}

private struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension RequestID {
    fileprivate var jsonText: String {
        switch self {
        case .number(let number): "\(number)"
        case .string(let text): "\"\(text)\""
        }
    }
}
