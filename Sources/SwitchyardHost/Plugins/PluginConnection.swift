import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardUV

/// One running plugin process and the JSON-lines conversation with it.
///
/// Confined to the loop thread. stdout and stderr are read from the moment of spawn; every line from stdout is
/// framed, parsed strictly and classified; requests carry deadlines; the write queue towards the plugin is bounded
/// in bytes, so a plugin that stops reading is detected instead of growing host memory.
final class PluginConnection {
    enum State: Equatable { case starting, ready, stopping, terminated }

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
    let loop: UVLoop
    var logger: Logger
    /// The host's protocol trace; `trace.isOn` is the only thing the I/O paths test while nothing records.
    let trace: ProtocolTrace
    var onEvent: (Event) -> Void = { _ in }

    var state = State.starting
    private(set) var process: UVProcess?
    private(set) var routeTable: InitializeRequest.Result?
    var reader: MessageReader
    var stderr: StderrForwarder

    /// Ids, pending requests and deadlines (the protocol's bookkeeping, shared with the SDK and the control client).
    /// Deadlines are on the loop's running clock (``UVLoop/activeNow``): the host's own stalls do not count.
    let endpoint = RPCEndpoint()
    /// Set by the endpoint's `send` when a request's line could not be written, so ``sendRaw`` fails just it.
    var writeFailure: ResponseError?
    var deadlineTimer: UVTimer?
    var armedDeadline: UInt64 = .max
    /// A deadline verdict is waiting for the next poll (see ``judgeDeadlines()``).
    var deadlineJudgementPending = false
    var ladderTimer: UVTimer?

    var exitStatus: TerminationStatus?
    var stdoutClosed = false
    var stderrClosed = false
    var killReason: String?
    var stopRequested = false
    var handshakeFailureReported = false
    var exitGraceTimer: UVTimer?
    /// Bytes read from stdout since the loop last polled in between (see ``yieldStdout()``).
    var stdoutBytesSinceYield = 0
    static let stdoutBytesPerTurn = 256 * 1024
    /// Resumes reading stderr when a window whose budget was spent ends.
    var stderrPauseTimer: UVTimer?

    /// How many times the supervisor restarted this plugin before this process (sent in `initialize`).
    let restarts: Int
    // The rules, as values (PluginPolicies.swift); this class does the I/O and the timers. Every `now` they get
    // is the loop's running clock, read after a poll (spec §6.1).
    var admission: AdmissionPolicy
    var heartbeat: HeartbeatPolicy
    var writeQueue: WriteQueuePolicy
    /// Messages dropped over the rate.
    var droppedOverRate = 0
    var heartbeatTimer: UVTimer?
    var heartbeatJudgementPending = false
    /// A message was read since the heartbeat last heard of the plugin (see ``noteHeard()``).
    var heardInRead = false
    var writeStallTimer: UVTimer?

    /// Counters for status and benchmarks.
    var messagesReceived = 0
    private(set) var messagesSent = 0
    private(set) var spawnedAt: UInt64 = 0
    /// Why the spawn failed, when it did: the supervisor retries a lack of resources, not a missing executable.
    private(set) var startFailure: UVError?
    private(set) var readyAt: UInt64 = 0

    var pid: Int32 { process?.pid ?? 0 }
    var pendingRequestCount: Int { endpoint.pendingCount }

    init(plugin: ResolvedPlugin, loop: UVLoop, logger: Logger, trace: ProtocolTrace, restarts: Int = 0) {
        self.name = plugin.name
        self.plugin = plugin
        self.loop = loop
        self.trace = trace
        self.restarts = restarts
        self.admission = AdmissionPolicy(plugin.limits)
        self.heartbeat = HeartbeatPolicy(intervalMs: 0, timeoutMs: 0, now: 0)
        self.writeQueue = WriteQueuePolicy(limitBytes: plugin.maxWriteQueueBytes, windowMs: plugin.limits.heartbeatTimeoutMs)
        var logger = logger
        logger[metadataKey: "plugin"] = .string(plugin.name)
        self.logger = logger
        self.reader = MessageReader(maxLineLength: plugin.limits.maxLineBytes)
        self.stderr = StderrForwarder(maxBytesPerSecond: plugin.limits.maxStderrBytesPerSecond)
        endpoint.send = { [weak self] line in
            guard let self else { return }
            self.writeFailure = self.writeLine(line)
        }
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

    func handshakeAnswered(_ result: Result<InitializeRequest.Result, ResponseError>) {
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

    func failHandshake(_ error: ResponseError) {
        handshakeFailureReported = true
        let error = withStderrTail(error)
        logger.error("\(error.message)\(error.authorDetails.map { "\n" + $0 } ?? "")")
        onEvent(.handshakeFailed(error))
        kill(reason: "handshake failed")
    }

    /// `error` with the plugin's last stderr lines in `data.stderr` (and its name in `data.plugin`), so the author
    /// of a plugin that failed sees the traceback that led there. What the plugin put in `data` is kept; a `data`
    /// that is not an object (outside the spec) is left alone.
    ///
    /// What the plugin wrote to stderr before the answer or exit being handled is read first: it is already in the
    /// other pipe (a traceback printed, then the answer sent), but its read callback may not have run yet.
    func withStderrTail(_ error: ResponseError) -> ResponseError {
        process?.stderr?.readBuffered()
        let tail = stderr.tail()
        guard !tail.isEmpty, error.data == nil || error.data?.objectValue != nil else { return error }
        var data = error.data?.objectValue ?? JSONObject()
        if data["stderr"] == nil { data["stderr"] = .array(tail.map(JSONValue.string)) }
        if data["plugin"] == nil { data["plugin"] = .string(name) }
        var copy = error
        copy.data = .object(data)
        return copy
    }

    var exitDescription: String {
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
            completion(Self.decodeAnswer(R.self, result, plugin: name))
        }
    }

    /// Sends a typed request and suspends until its answer, its error, its timeout or the plugin's end, whichever
    /// comes first; resumes on the loop's actor. Every request ends exactly once (the endpoint fails what is pending
    /// when the plugin ends), so the continuation is always resumed.
    func request<R: HostToPluginRequest>(_ type: R.Type, _ params: R.Params) async -> Result<R.Result, ResponseError> {
        await withCheckedContinuation { continuation in send(type, params) { continuation.resume(returning: $0) } }
    }

    /// ``sendRaw(method:params:timeoutMs:_:)`` suspended until the answer.
    func requestRaw(method: String, params: JSONValue?) async -> Result<JSONValue, ResponseError> {
        await withCheckedContinuation { continuation in sendRaw(method: method, params: params) { continuation.resume(returning: $0) } }
    }

    /// Sends a request with untyped params.
    func sendRaw(
        method: String, params: JSONValue?, timeoutMs: Int? = nil,
        _ completion: @escaping (Result<JSONValue, ResponseError>) -> Void
    ) {
        beginRequest(method: method, timeoutMs: timeoutMs, completion) { endpoint, deadline, timeout in
            endpoint.request(method, params: params, deadline: deadline, timeoutMs: timeout, completion: completion)
        }
    }

    /// Sends a typed notification.
    func notify<N: HostToPluginNotification>(_ type: N.Type, _ params: N.Params) {
        guard let value = try? Coding.encode(params) else { return }
        _ = write(.notification(method: N.method, params: value))
    }

    /// Answers a request the plugin sent.
    func respond(to id: RequestID, result: JSONValue) {
        admission.endRequest(id)
        _ = write(.response(id: id, result: result))
    }

    /// Answers a request the plugin sent with a result already encoded as JSON.
    func respond(to id: RequestID, encodedResult: [UInt8]) {
        admission.endRequest(id)
        _ = writeLine(Message.responseLine(id: id, encodedResult: encodedResult))
    }

    func respond(to id: RequestID, error: ResponseError) {
        admission.endRequest(id)
        _ = write(.errorResponse(id: id, error: error))
    }

    /// Writes one message; returns an error instead of throwing so callers can fail just their request.
    func write(_ message: Message) -> ResponseError? { writeLine(message.encodedLine()) }

    /// Writes one encoded line (what the endpoint hands over, too).
    func writeLine(_ line: [UInt8]) -> ResponseError? {
        guard let stdin = process?.stdin, stdin.isOpen else {
            return .pluginUnavailable(name, "its stdin is closed")
        }
        let queued = stdin.queuedBytes
        if !writeQueue.fits(line.count, queued: queued) {
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
        if trace.isOn { trace.message(line.last == 0x0A ? line.dropLast() : line[...], plugin: name, direction: .out, logger: logger) }
        // The running clock is read only past the limit: every message to every plugin passes here.
        let queuedAfter = stdin.queuedBytes
        if queuedAfter > plugin.maxWriteQueueBytes, writeQueue.wrote(queued: queuedAfter, now: loop.activeNow) {
            beginWriteStall()
        }
        return nil
    }

    func notReadingError(queued: Int) -> ResponseError {
        ResponseError(
            .limitExceeded, "plugin '\(name)' is not reading its stdin (\(queued) bytes queued)",
            data: ["plugin": .string(name), "queuedBytes": .int(Int64(queued)), "limit": "maxWriteQueueBytes"])
    }

    /// New requests are refused (not queued) while the plugin is behind on reading, so a caller gets back-pressure
    /// at once and host memory stays bounded; the plugin itself is judged by ``judgeWriteStall()``.
    func refuseWhileNotReading(method: String) -> ResponseError? {
        let queued = queuedBytes
        guard writeQueue.refusesRequests(queued: queued), method != ShutdownRequest.method else { return nil }
        return notReadingError(queued: queued)
    }

    // MARK: - Deadlines
    //
    // A timer only wakes the loop; the verdict waits for the next poll (``UVLoop/afterNextPoll(_:)``), so an answer
    // already in the pipe is read first, and is measured on the running clock, so the host's own stall is not
    // counted against the plugin.

    func armDeadlineTimer(_ deadline: UInt64) {
        guard let deadlineTimer else { return }
        armedDeadline = deadline
        let now = loop.activeNow
        try? deadlineTimer.start(after: deadline > now ? deadline - now : 0) { [weak self] in
            self?.deadlineFired()
        }
    }

    func deadlineFired() {
        guard !deadlineJudgementPending else { return }
        deadlineJudgementPending = true
        loop.afterNextPoll { [weak self] in self?.judgeDeadlines() }
    }

    func judgeDeadlines() {
        deadlineJudgementPending = false
        armedDeadline = .max
        guard state != .terminated else { return }
        let expired = endpoint.expire(now: loop.activeNow) { [name] request in
            .timeout(name, method: request.method, milliseconds: request.timeoutMs ?? 0)
        }
        for request in expired {
            if state != .terminated { onEvent(.requestTimedOut(method: request.method)) }
            // A plugin that does not answer is hung: treated as a crash (the supervisor's policy decides what next).
            // The handshake and the shutdown ladder handle their own deadlines.
            if state == .ready && request.method != InitializeRequest.method {
                kill(reason: "hung: no answer to '\(request.method)' within \(request.timeoutMs ?? 0) ms")
            }
        }
        if state != .terminated, let next = endpoint.nextDeadline { armDeadlineTimer(next) }
    }

}

/// The host's version, reported in `initialize`.
public let switchyardVersion = "0.1.0"
