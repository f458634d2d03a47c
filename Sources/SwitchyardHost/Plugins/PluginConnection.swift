import DequeModule
import Glibc
import Logging
import SwitchyardProtocol
public import SwitchyardUV

/// How a plugin process ended, and why, as the host classifies it (systemd's and Chrome's exit classes).
public struct PluginTermination: Sendable, Equatable, CustomStringConvertible {
    public enum Cause: Sendable, Equatable {
        /// The host asked it to stop (shutdown ladder).
        case stopped
        /// It exited on its own with status 0.
        case exitedCleanly
        /// It exited on its own with a non-zero status.
        case exitedWithError
        /// A signal the host did not send (a crash: SIGSEGV, SIGABRT, an outside SIGKILL...).
        case crashed
        /// The host killed it: the reason says why (hung, stopped reading, protocol violations, timeout).
        case killed(String)
        /// It could not be started at all (exec failed).
        case failedToStart(String)
    }

    public let status: TerminationStatus?
    public let cause: Cause
    /// The last lines it wrote to stderr, for the crash report.
    public let stderrTail: [String]

    /// Abnormal in Erlang's sense: anything but an exit the host asked for or a clean exit.
    public var isAbnormal: Bool {
        switch cause {
        case .stopped, .exitedCleanly: false
        default: true
        }
    }

    public var description: String {
        let how = status.map { "\($0)" } ?? "not started"
        switch cause {
        case .stopped: return "stopped (\(how))"
        case .exitedCleanly: return "exited cleanly"
        case .exitedWithError: return how
        case .crashed: return "crashed (\(how))"
        case .killed(let reason): return "killed by the host: \(reason)"
        case .failedToStart(let reason): return "failed to start: \(reason)"
        }
    }
}

/// One running plugin process and the JSON-lines conversation with it.
///
/// Confined to the loop thread. stdout and stderr are read from the moment of spawn; every line from stdout is
/// framed, parsed strictly and classified; requests carry deadlines; the write queue towards the plugin is bounded
/// in bytes, so a plugin that stops reading is detected instead of growing host memory.
///
/// - Important: Must be used on the loop thread only.
final class PluginConnection {
    enum State: Equatable {
        case starting, ready, stopping, terminated
    }

    /// What the connection reports to its owner.
    enum Event {
        /// The handshake completed; the route table is in the result.
        case ready(InitializeRequest.Result)
        /// The handshake failed; the process is being killed (a `.terminated` follows).
        case handshakeFailed(ResponseError)
        /// A request from the plugin (other than `$/ping`, answered here). Answer with ``respond(to:result:)``.
        case request(id: RequestID, method: String, params: JSONValue?)
        /// A notification from the plugin (other than `log`, logged here).
        case notification(method: String, params: JSONValue?)
        /// A line that was not a valid message, or a message that broke the protocol.
        case violation(ResponseError)
        /// A request to the plugin timed out.
        case requestTimedOut(method: String)
        /// The process ended and every pipe is closed. Pending requests have failed with `pluginUnavailable`.
        case terminated(PluginTermination)
    }

    let name: String
    let plugin: ResolvedPlugin
    private let loop: UVLoop
    private var logger: Logger
    var onEvent: (Event) -> Void = { _ in }

    private(set) var state = State.starting
    private(set) var process: UVProcess?
    private(set) var routeTable: InitializeRequest.Result?
    private var reader: MessageReader
    private var stderr: StderrForwarder

    private struct Pending {
        let method: String
        /// On the loop's running clock (``UVLoop/activeNow``): the host's own stalls do not count.
        let deadline: UInt64
        let timeoutMs: Int
        let completion: (Result<JSONValue, ResponseError>) -> Void
    }

    private var pending: [Int64: Pending] = [:]
    private var nextID: Int64 = 1
    private var deadlineTimer: UVTimer?
    private var armedDeadline: UInt64 = .max
    /// A deadline verdict is waiting for the next poll (see ``judgeDeadlines()``).
    private var deadlineJudgementPending = false
    private var ladderTimer: UVTimer?

    private var exitStatus: TerminationStatus?
    private var stdoutClosed = false
    private var stderrClosed = false
    private var killReason: String?
    private var stopRequested = false
    private var handshakeFailureReported = false
    private var exitGraceTimer: UVTimer?

    /// How many times the supervisor restarted this plugin before this process (sent in `initialize`).
    private let restarts: Int
    /// Token bucket for messages from the plugin (`maxMessagesPerSecond`, burst of the same size).
    private var tokens: Double
    private var tokensRefilledAt: UInt64 = 0
    /// Messages dropped over the rate.
    private(set) var droppedOverRate = 0
    /// Requests from the plugin the host has not answered yet (`maxOutstandingRequests`).
    private var inboundOutstanding = Set<RequestID>()
    /// Loop times of recent protocol errors (the quarantine window).
    private var recentErrors = Deque<UInt64>()
    private static let errorWindowMs: UInt64 = 10_000
    private var heartbeatTimer: UVTimer?
    private var heartbeatJudgementPending = false
    /// The unanswered heartbeat's id and when it was sent (running clock). Heartbeats use string ids (`hb-N`) of
    /// their own, so they never shift the numbering of the host's other requests.
    private var heartbeatOutstanding: (id: String, sentAt: UInt64)?
    private var heartbeatCount = 0
    private var lastHeardAt: UInt64 = 0
    /// Set while the write queue is over `maxWriteQueueBytes`: the bytes queued and the running-clock time when the
    /// plugin last made progress reading them.
    private var writeStall: (queued: Int, since: UInt64)?
    private var writeStallTimer: UVTimer?

    /// Counters for status and benchmarks.
    private(set) var messagesReceived = 0
    private(set) var messagesSent = 0
    private(set) var spawnedAt: UInt64 = 0
    /// Why the spawn failed, when it did: the supervisor retries a lack of resources, not a missing executable.
    private(set) var startFailure: UVError?
    private(set) var readyAt: UInt64 = 0

    var pid: Int32 { process?.pid ?? 0 }
    var pendingRequestCount: Int { pending.count }

    init(plugin: ResolvedPlugin, loop: UVLoop, logger: Logger, restarts: Int = 0) {
        self.name = plugin.name
        self.plugin = plugin
        self.loop = loop
        self.restarts = restarts
        self.tokens = Double(plugin.limits.maxMessagesPerSecond)
        var logger = logger
        logger[metadataKey: "plugin"] = .string(plugin.name)
        self.logger = logger
        self.reader = MessageReader(maxLineLength: plugin.limits.maxLineBytes)
        self.stderr = StderrForwarder(maxBytesPerSecond: plugin.limits.maxStderrBytesPerSecond)
    }

    // MARK: - Start and handshake

    /// Spawns the process and sends `initialize`. Failures arrive as events (`handshakeFailed`, `terminated`).
    func start(guardian: Guardian?) {
        spawnedAt = UVLoop.hrtime
        do throws(UVError) {
            deadlineTimer = try UVTimer(loop: loop)
            let onExit: (TerminationStatus) -> Void = { [weak self] status in self?.processExited(status) }
            let process: UVProcess
            if let guardian {
                process = try guardian.spawn(plugin.spawn, onExit: onExit)
            } else {
                process = try UVProcess.spawn(loop: loop, options: plugin.spawn, onExit: onExit)
            }
            self.process = process
            try process.stdout?.startReading { [weak self] event in self?.stdoutEvent(event) }
            try process.stderr?.startReading { [weak self] event in self?.stderrEvent(event) }
            process.stdin?.onWriteError = { [weak self] error in
                self?.logger.debug("write to plugin failed: \(error)")
            }
        } catch {
            startFailure = error
            let reason = "\(error)"
            // A lack of resources is retried by the supervisor, which logs it (rate-limited) with the errno name.
            if error.isResourceExhaustion {
                logger.debug("cannot start plugin '\(name)': \(reason)")
            } else {
                logger.error("cannot start plugin '\(name)': \(reason)")
            }
            state = .terminated
            deadlineTimer?.close()
            deadlineTimer = nil
            onEvent(.handshakeFailed(.handshake(name, .pluginUnavailable, "cannot start: \(reason)")))
            onEvent(.terminated(PluginTermination(status: nil, cause: .failedToStart(reason), stderrTail: [])))
            return
        }
        let params = InitializeRequest.Params(
            protocolVersions: ProtocolVersion.supported,
            host: PluginInfo(name: "switchyard", version: switchyardVersion),
            pluginName: name, limits: plugin.limits, restarts: restarts > 0 ? restarts : nil)
        send(InitializeRequest.self, params, timeoutMs: plugin.startTimeoutMs) { [weak self] result in
            self?.handshakeAnswered(result)
        }
    }

    private func handshakeAnswered(_ result: Result<InitializeRequest.Result, ResponseError>) {
        guard state == .starting else { return }
        switch result {
        case .failure(let error):
            let failure: ResponseError
            switch error.code {
            case .unsupportedProtocolVersion:
                let theirs = error.data?["supported"].map { "\($0)" } ?? "unknown"
                failure = .handshake(
                    name, .unsupportedProtocolVersion,
                    "it speaks protocol versions \(theirs), the host speaks \(ProtocolVersion.supported)",
                    data: ["supported": .array(ProtocolVersion.supported.map { .int(Int64($0)) })])
            case .timeout:
                failure = .handshake(
                    name, .timeout, "no answer to 'initialize' within \(plugin.startTimeoutMs) ms",
                    data: ["timeoutMs": .int(Int64(plugin.startTimeoutMs))])
            case .pluginUnavailable:
                failure = .handshake(name, .pluginUnavailable, "it \(exitDescription) before answering 'initialize'")
            default:
                failure = .handshake(name, error.code, error.message, data: error.data?.objectValue ?? [:])
            }
            failHandshake(failure)
        case .success(let answer):
            guard ProtocolVersion.supported.contains(answer.protocolVersion) else {
                failHandshake(
                    .handshake(
                        name, .unsupportedProtocolVersion,
                        "it chose protocol version \(answer.protocolVersion), the host speaks \(ProtocolVersion.supported)",
                        data: ["supported": .array(ProtocolVersion.supported.map { .int(Int64($0)) })]))
                return
            }
            routeTable = answer
            state = .ready
            readyAt = UVLoop.hrtime
            notify(InitializedNotification.self, Empty())
            startHeartbeat()
            logger.debug(
                "ready: \(answer.plugin.name) \(answer.plugin.version), protocol \(answer.protocolVersion), \(answer.coordinators.count) coordinator types, \((readyAt - spawnedAt) / 1_000) µs after spawn"
            )
            onEvent(.ready(answer))
        }
    }

    private func failHandshake(_ error: ResponseError) {
        handshakeFailureReported = true
        logger.error("\(error.message)")
        onEvent(.handshakeFailed(error))
        kill(reason: "handshake failed")
    }

    private var exitDescription: String {
        guard let exitStatus else { return "closed its stdout" }
        return "\(exitStatus)"
    }

    // MARK: - Sending

    /// Sends a typed request; `completion` runs on the loop thread exactly once.
    func send<R: HostToPluginRequest>(
        _ type: R.Type, _ params: R.Params, timeoutMs: Int? = nil,
        _ completion: @escaping (Result<R.Result, ResponseError>) -> Void
    ) {
        let value: JSONValue
        do { value = try Coding.encode(params) } catch {
            completion(.failure(ResponseError(.internalError, "cannot encode \(R.method) params: \(error)")))
            return
        }
        sendRaw(method: R.method, params: value, timeoutMs: timeoutMs) { [name] result in
            switch result {
            case .failure(let error): completion(.failure(error))
            case .success(let value):
                do {
                    completion(.success(try Coding.decode(R.Result.self, from: value)))
                } catch {
                    let base = ResponseError.invalidParams(method: R.method, error)
                    completion(.failure(ResponseError(
                        .invalidAnswer, "plugin '\(name)' answered '\(R.method)' with an invalid result: \(base.message)",
                        data: base.adding("plugin", .string(name)).data)))
                }
            }
        }
    }

    /// Sends a request with untyped params.
    func sendRaw(
        method: String, params: JSONValue?, timeoutMs: Int? = nil,
        _ completion: @escaping (Result<JSONValue, ResponseError>) -> Void
    ) {
        guard state == .starting || state == .ready || (state == .stopping && method == ShutdownRequest.method) else {
            completion(.failure(.pluginUnavailable(name, "it is \(state)")))
            return
        }
        if let error = refuseWhileNotReading(method: method) {
            completion(.failure(error))
            return
        }
        let id = nextID
        nextID += 1
        let timeout = timeoutMs ?? plugin.limits.requestTimeoutMs
        let deadline = loop.activeNow + UInt64(timeout)
        pending[id] = Pending(method: method, deadline: deadline, timeoutMs: timeout, completion: completion)
        if let error = write(.request(id: .number(id), method: method, params: params)) {
            pending[id] = nil
            completion(.failure(error))
            return
        }
        if deadline < armedDeadline { armDeadlineTimer(deadline) }
    }

    /// Sends a typed notification.
    func notify<N: HostToPluginNotification>(_ type: N.Type, _ params: N.Params) {
        guard let value = try? Coding.encode(params) else { return }
        _ = write(.notification(method: N.method, params: value))
    }

    /// Answers a request the plugin sent.
    func respond(to id: RequestID, result: JSONValue) {
        inboundOutstanding.remove(id)
        _ = write(.response(id: id, result: result))
    }

    func respond(to id: RequestID, error: ResponseError) {
        inboundOutstanding.remove(id)
        _ = write(.errorResponse(id: id, error: error))
    }

    /// Writes one message; returns an error instead of throwing so callers can fail just their request.
    private func write(_ message: Message) -> ResponseError? {
        guard let stdin = process?.stdin, stdin.isOpen else {
            return .pluginUnavailable(name, "its stdin is closed")
        }
        let line = message.encodedLine()
        let queued = stdin.queuedBytes
        if queued + line.count > 2 * plugin.maxWriteQueueBytes {
            // The hard bound on host memory: answers and notifications may overrun the soft limit (refusing them
            // would lose them), but not without end.
            kill(reason: "stopped reading its stdin (\(queued) bytes queued, twice the limit of \(plugin.maxWriteQueueBytes))")
            return notReadingError(queued: queued)
        }
        do {
            try stdin.write(line)
        } catch {
            return .pluginUnavailable(name, "writing failed: \(error)")
        }
        messagesSent += 1
        if writeStall == nil && stdin.queuedBytes > plugin.maxWriteQueueBytes { beginWriteStall() }
        return nil
    }

    private func notReadingError(queued: Int) -> ResponseError {
        ResponseError(
            .limitExceeded, "plugin '\(name)' is not reading its stdin (\(queued) bytes queued)",
            data: ["plugin": .string(name), "queuedBytes": .int(Int64(queued)), "limit": "maxWriteQueueBytes"])
    }

    /// New requests are refused (not queued) while the plugin is behind on reading, so a caller gets back-pressure
    /// at once and host memory stays bounded; the plugin itself is judged by ``judgeWriteStall()``.
    private func refuseWhileNotReading(method: String) -> ResponseError? {
        guard writeStall != nil, method != ShutdownRequest.method else { return nil }
        let queued = queuedBytes
        guard queued > plugin.maxWriteQueueBytes else { return nil }
        return notReadingError(queued: queued)
    }

    // MARK: - Write stall
    //
    // A full write queue is evidence only if it stays full: a healthy plugin on a starved machine reads slowly but
    // it reads. The verdict "stopped reading" needs `heartbeatTimeoutMs` of running time in which the queue did not
    // shrink at all.

    private func beginWriteStall() {
        let queued = queuedBytes
        let window = UInt64(plugin.limits.heartbeatTimeoutMs)
        writeStall = (queued, loop.activeNow)
        logger.warning(
            "plugin '\(name)' stopped reading its stdin (\(queued) bytes queued, limit \(plugin.maxWriteQueueBytes)): requests are refused; it is killed unless it reads within \(window) ms")
        if writeStallTimer == nil { writeStallTimer = try? UVTimer(loop: loop) }
        try? writeStallTimer?.start(after: window) { [weak self] in
            self?.loop.afterNextPoll { [weak self] in self?.judgeWriteStall() }
        }
    }

    private func judgeWriteStall() {
        guard let stall = writeStall, state != .terminated else { return }
        let queued = queuedBytes
        let now = loop.activeNow
        let window = UInt64(plugin.limits.heartbeatTimeoutMs)
        if queued <= plugin.maxWriteQueueBytes {
            writeStall = nil
            logger.notice("plugin '\(name)' reads its stdin again (\(queued) bytes queued)")
            return
        }
        if queued < stall.queued {
            writeStall = (queued, now)
        } else if now &- stall.since >= window {
            kill(reason: "stopped reading its stdin (\(queued) bytes queued, limit \(plugin.maxWriteQueueBytes), nothing read for \(now &- stall.since) ms)")
            return
        }
        let since = writeStall?.since ?? now
        let remaining = since + window > now ? since + window - now : 1
        try? writeStallTimer?.start(after: remaining) { [weak self] in
            self?.loop.afterNextPoll { [weak self] in self?.judgeWriteStall() }
        }
    }

    /// Bytes queued towards the plugin that it has not read yet.
    var queuedBytes: Int { process?.stdin?.queuedBytes ?? 0 }

    // MARK: - Deadlines

    // A timer only wakes the loop; the verdict waits for the next poll (``UVLoop/afterNextPoll(_:)``), so an answer
    // already in the pipe is read first, and is measured on the running clock, so the host's own stall is not
    // counted against the plugin.

    private func armDeadlineTimer(_ deadline: UInt64) {
        guard let deadlineTimer else { return }
        armedDeadline = deadline
        let now = loop.activeNow
        try? deadlineTimer.start(after: deadline > now ? deadline - now : 0) { [weak self] in
            self?.deadlineFired()
        }
    }

    private func deadlineFired() {
        guard !deadlineJudgementPending else { return }
        deadlineJudgementPending = true
        loop.afterNextPoll { [weak self] in self?.judgeDeadlines() }
    }

    private func judgeDeadlines() {
        deadlineJudgementPending = false
        armedDeadline = .max
        guard state != .terminated else { return }
        let now = loop.activeNow
        var expired: [(Int64, Pending)] = []
        var next: UInt64 = .max
        for (id, request) in pending {
            if request.deadline <= now {
                expired.append((id, request))
            } else {
                next = min(next, request.deadline)
            }
        }
        for (id, request) in expired.sorted(by: { $0.0 < $1.0 }) {
            pending[id] = nil
            request.completion(.failure(.timeout(name, method: request.method, milliseconds: request.timeoutMs)))
            if state != .terminated { onEvent(.requestTimedOut(method: request.method)) }
            // A plugin that does not answer is hung: treated as a crash (the supervisor's policy decides what next).
            // The handshake and the shutdown ladder handle their own deadlines.
            if state == .ready && request.method != InitializeRequest.method {
                kill(reason: "hung: no answer to '\(request.method)' within \(request.timeoutMs) ms")
            }
        }
        if next != .max && state != .terminated { armDeadlineTimer(next) }
    }

    // MARK: - Reading

    private func stdoutEvent(_ event: UVPipe.ReadEvent) {
        switch event {
        case .data(let bytes):
            // A plugin being killed (quarantined, hung, not reading) has nothing more to say: what it still had in
            // the pipe is drained unparsed, so a flood costs nothing once it has been caught.
            guard killReason == nil else { return }
            reader.append(bytes)
            while state != .terminated, killReason == nil, let next = reader.next() { handle(next) }
        case .eof, .error:
            // A condemned plugin's unterminated remainder is not one more line to judge (nor to log twice).
            if let last = reader.finish(), killReason == nil { handle(last) }
            stdoutClosed = true
            process?.stdout?.close()
            checkTerminated()
        }
    }

    private func stderrEvent(_ event: UVPipe.ReadEvent) {
        switch event {
        case .data(let bytes):
            let (lines, startedDropping) = stderr.consume(bytes, now: loop.now)
            for line in lines { logger.info("\(line)") }
            if startedDropping {
                report(ResponseError(
                    .limitExceeded, "plugin '\(name)' writes more than \(plugin.limits.maxStderrBytesPerSecond) stderr bytes per second; the excess is dropped",
                    data: ["plugin": .string(name), "limit": "maxStderrBytesPerSecond"]))
            }
        case .eof, .error:
            for line in stderr.finish() { logger.info("\(line)") }
            if stderr.droppedBytes > 0 {
                logger.warning("dropped \(stderr.droppedBytes) stderr bytes over the rate limit")
            }
            stderrClosed = true
            process?.stderr?.close()
            checkTerminated()
        }
    }

    private func handle(_ event: MessageReader.Event) {
        switch event {
        case .violation(let violation):
            let named = violation.error.naming(plugin: name)
            if let id = violation.requestID { respond(to: id, error: named) }
            report(named)
        case .message(let message, let lineNumber):
            messagesReceived += 1
            lastHeardAt = loop.activeNow
            guard withinRate(message, lineNumber: lineNumber) else { return }
            switch message {
            case .response(let id, let result):
                resolve(id, .success(result), lineNumber: lineNumber)
            case .errorResponse(let id, let error):
                guard let id else {
                    report(ResponseError(.invalidRequest, "line \(lineNumber): error response without an id: \(error.message)", data: ["line": .int(Int64(lineNumber))]).naming(plugin: name))
                    return
                }
                resolve(id, .failure(error), lineNumber: lineNumber)
            case .request(let id, let method, let params):
                if method == PingRequest.method {
                    respond(to: id, result: .object(JSONObject()))
                } else if state != .ready {
                    respond(
                        to: id,
                        error: ResponseError(.notInitialized, "'\(method)' before the handshake completed", data: ["method": .string(method)]))
                } else if inboundOutstanding.count >= plugin.limits.maxOutstandingRequests || inboundOutstanding.contains(id) {
                    let error = inboundOutstanding.contains(id)
                        ? ResponseError(.invalidRequest, "line \(lineNumber): request id \(id) is already in use", data: ["line": .int(Int64(lineNumber)), "field": "id"])
                        : ResponseError(
                            .limitExceeded, "line \(lineNumber): more than \(plugin.limits.maxOutstandingRequests) requests outstanding",
                            data: ["line": .int(Int64(lineNumber)), "limit": "maxOutstandingRequests"])
                    let named = error.naming(plugin: name)
                    _ = write(.errorResponse(id: id, error: named))
                    report(named)
                } else {
                    inboundOutstanding.insert(id)
                    onEvent(.request(id: id, method: method, params: params))
                }
            case .notification(let method, let params):
                if method == LogNotification.method {
                    log(params)
                } else {
                    onEvent(.notification(method: method, params: params))
                }
            }
        }
    }

    private func resolve(_ id: RequestID, _ result: Result<JSONValue, ResponseError>, lineNumber: Int) {
        if case .string(let text) = id, text == heartbeatOutstanding?.id {
            heartbeatOutstanding = nil
            return
        }
        guard case .number(let number) = id, let request = pending.removeValue(forKey: number) else {
            report(
                ResponseError(
                    .invalidRequest, "line \(lineNumber): response to unknown request id \(id)",
                    data: ["line": .int(Int64(lineNumber)), "field": "id"]
                ).naming(plugin: name))
            return
        }
        request.completion(result)
    }

    /// A protocol error: logged, reported, and counted; more than `maxProtocolErrors` within 10 s quarantines the
    /// plugin (killed; its supervisor's policy decides whether it comes back).
    private func report(_ error: ResponseError, log: Bool = true) {
        guard killReason == nil else { return }
        if log { logger.warning("\(error.message)") }
        onEvent(.violation(error))
        guard state == .ready || state == .starting else { return }
        // The window is running time: a backlog read after the host's own stall must not look like a burst.
        let now = loop.activeNow
        recentErrors.append(now)
        while let first = recentErrors.first, now &- first > Self.errorWindowMs || recentErrors.count > plugin.limits.maxProtocolErrors + 1 {
            recentErrors.removeFirst()
        }
        if recentErrors.count > plugin.limits.maxProtocolErrors {
            kill(reason: "quarantined: \(recentErrors.count) protocol errors within \(Self.errorWindowMs / 1_000) s (last: \(error.message))")
        }
    }

    /// Takes a token for one message; a message over the rate is a protocol error (a request is answered with
    /// `-32004`), logged for the first and every 10,000th, not for each.
    private func withinRate(_ message: Message, lineNumber: Int) -> Bool {
        // Answers to the host's own requests are bounded by the host's sending, so they take no token: a pipelined
        // burst the host asked for must not look like a flood. Unsolicited answers (unknown ids) still count.
        switch message {
        case .response(.number(let number), _), .errorResponse(.number(let number)?, _):
            if pending[number] != nil { return true }
        default:
            break
        }
        let now = loop.now
        let rate = Double(plugin.limits.maxMessagesPerSecond)
        if tokensRefilledAt == 0 { tokensRefilledAt = now }
        tokens = min(rate, tokens + Double(now &- tokensRefilledAt) * rate / 1_000)
        tokensRefilledAt = now
        if tokens >= 1 {
            tokens -= 1
            return true
        }
        let error = ResponseError(
            .limitExceeded, "line \(lineNumber): more than \(plugin.limits.maxMessagesPerSecond) messages per second",
            data: ["line": .int(Int64(lineNumber)), "limit": "maxMessagesPerSecond"]
        ).naming(plugin: name)
        if case .request(let id, _, _) = message { _ = write(.errorResponse(id: id, error: error)) }
        droppedOverRate += 1
        report(error, log: droppedOverRate % 10_000 == 1)
        return false
    }

    // MARK: - Heartbeat

    /// Pings the plugin when it has been silent for `heartbeatIntervalMs`; a ping unanswered for
    /// `heartbeatTimeoutMs` means it is hung (stopped, deadlocked, spinning) and it is killed like a crash.
    private func startHeartbeat() {
        let interval = UInt64(plugin.limits.heartbeatIntervalMs)
        guard interval > 0, let timer = try? UVTimer(loop: loop) else { return }
        heartbeatTimer = timer
        lastHeardAt = loop.activeNow
        let tick = max(20, min(interval, UInt64(plugin.limits.heartbeatTimeoutMs)) / 4)
        try? timer.start(after: tick, repeatEvery: tick) { [weak self] in
            // Judged after the next poll, on the running clock, like every other deadline.
            guard let self, !self.heartbeatJudgementPending else { return }
            self.heartbeatJudgementPending = true
            self.loop.afterNextPoll { [weak self] in self?.heartbeat() }
        }
    }

    private func heartbeat() {
        heartbeatJudgementPending = false
        guard state == .ready else { return }
        let now = loop.activeNow
        if let outstanding = heartbeatOutstanding {
            if now &- outstanding.sentAt >= UInt64(plugin.limits.heartbeatTimeoutMs) {
                kill(reason: "hung: no answer to the heartbeat $/ping within \(plugin.limits.heartbeatTimeoutMs) ms of running time")
            }
            return
        }
        guard now &- lastHeardAt >= UInt64(plugin.limits.heartbeatIntervalMs) else { return }
        heartbeatCount += 1
        let id = "hb-\(heartbeatCount)"
        heartbeatOutstanding = (id, now)
        _ = write(.request(id: .string(id), method: PingRequest.method, params: .object(JSONObject())))
    }

    private func log(_ params: JSONValue?) {
        guard let log = try? Coding.decode(LogNotification.Params.self, from: params) else { return }
        let level: Logger.Level =
            switch log.level {
            case .trace: .trace
            case .debug: .debug
            case .info: .info
            case .notice: .notice
            case .warning: .warning
            case .error: .error
            case .critical: .critical
            }
        logger.log(level: level, "\(log.message)")
    }

    // MARK: - Ending

    /// Kills the process group at once (SIGKILL). The reason is kept for the termination report.
    func kill(reason: String) {
        // One verdict per process, logged once: later evidence against a condemned plugin changes nothing.
        guard state != .terminated, killReason == nil, let process, process.terminationStatus == nil else { return }
        killReason = reason
        logger.warning("killing plugin '\(name)': \(reason)")
        try? process.killGroup(SIGKILL)
    }

    /// Sends a signal to the plugin's process group (for fault experiments: SIGSTOP, SIGCONT).
    func signal(_ number: Int32) {
        guard let process, process.terminationStatus == nil else { return }
        try? process.killGroup(number)
    }

    /// Runs the shutdown ladder: `shutdown` request, `exit` notification, stdin closed, SIGTERM after `graceMs`,
    /// SIGKILL after another `graceMs`. Completion is the `.terminated` event.
    func stop(graceMs: Int = 2_000, shutdownTimeoutMs: Int = 1_000) {
        guard !stopRequested, state != .terminated else { return }
        stopRequested = true
        let wasReady = state == .ready
        state = .stopping
        guard wasReady else {
            closeStdinAndEscalate(graceMs: graceMs)
            return
        }
        sendRaw(method: ShutdownRequest.method, params: .object(JSONObject()), timeoutMs: shutdownTimeoutMs) {
            [weak self] _ in
            guard let self, self.state != .terminated else { return }
            _ = self.write(.notification(method: ExitNotification.method, params: nil))
            self.closeStdinAndEscalate(graceMs: graceMs)
        }
    }

    private func closeStdinAndEscalate(graceMs: Int) {
        if let stdin = process?.stdin, stdin.isOpen {
            try? stdin.shutdown { _ in stdin.close() }
        }
        guard ladderTimer == nil, let timer = try? UVTimer(loop: loop) else { return }
        ladderTimer = timer
        try? timer.start(after: UInt64(graceMs)) { [weak self] in
            guard let self, let process = self.process, process.terminationStatus == nil else { return }
            self.logger.notice("plugin '\(self.name)' did not exit after stdin closed; sending SIGTERM")
            try? process.killGroup(SIGTERM)
            try? timer.start(after: UInt64(graceMs)) { [weak self] in
                guard let self, let process = self.process, process.terminationStatus == nil else { return }
                self.logger.warning("plugin '\(self.name)' ignored SIGTERM; sending SIGKILL")
                if self.killReason == nil { self.killReason = "ignored SIGTERM during shutdown" }
                try? process.killGroup(SIGKILL)
            }
        }
    }

    private func processExited(_ status: TerminationStatus) {
        exitStatus = status
        // Descendants that still hold the pipes open must not keep the connection alive (the group is the plugin's).
        if let pid = process?.pid, pid > 0 {
            _ = SystemProcess.kill(-pid, SIGKILL)
        }
        // exit_cb can fire before the last stdout bytes are read: give the pipes a moment to reach EOF.
        if !(stdoutClosed && stderrClosed), let timer = try? UVTimer(loop: loop) {
            exitGraceTimer = timer
            try? timer.start(after: 200) { [weak self] in
                guard let self else { return }
                self.stdoutClosed = true
                self.stderrClosed = true
                self.checkTerminated()
            }
        }
        checkTerminated()
    }

    private func checkTerminated() {
        guard state != .terminated, let exitStatus, stdoutClosed, stderrClosed else { return }
        let wasStarting = state == .starting
        state = .terminated
        process?.stdin?.close()
        process?.stdout?.close()
        process?.stderr?.close()
        deadlineTimer?.close()
        deadlineTimer = nil
        ladderTimer?.close()
        ladderTimer = nil
        heartbeatTimer?.close()
        heartbeatTimer = nil
        writeStallTimer?.close()
        writeStallTimer = nil
        exitGraceTimer?.close()
        exitGraceTimer = nil

        let cause: PluginTermination.Cause
        if let killReason {
            cause = .killed(killReason)
        } else if stopRequested {
            cause = .stopped
        } else {
            switch exitStatus {
            case .exited(0): cause = .exitedCleanly
            case .exited: cause = .exitedWithError
            case .signaled: cause = .crashed
            }
        }
        let termination = PluginTermination(status: exitStatus, cause: cause, stderrTail: Array(stderr.recent))
        if wasStarting && !handshakeFailureReported {
            handshakeFailureReported = true
            let error = ResponseError.handshake(
                name, .pluginUnavailable, "it \(termination) before answering 'initialize'",
                data: ["stderr": .array(termination.stderrTail.suffix(5).map { .string($0) })])
            logger.error("\(error.message)")
            onEvent(.handshakeFailed(error))
        }
        let failed = pending
        pending.removeAll()
        for (_, request) in failed.sorted(by: { $0.key < $1.key }) {
            request.completion(.failure(.pluginUnavailable(name, "\(termination)")))
        }
        switch cause {
        case .stopped, .exitedCleanly: logger.debug("plugin '\(name)' \(termination)")
        default: logger.warning("plugin '\(name)' \(termination)")
        }
        onEvent(.terminated(termination))
    }
}

/// The host's version, reported in `initialize`.
public let switchyardVersion = "0.1.0"
