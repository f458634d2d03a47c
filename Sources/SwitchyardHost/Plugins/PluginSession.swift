import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardUV

/// The conversation with one plugin, without I/O: the endpoint (ids, pending requests, deadlines), the policies
/// (admission, heartbeat, write queue, quarantine, the shutdown ladder) and the state machine from spawn to end.
///
/// Its inputs are bytes and end-of-stream from its ``PluginTransport`` (as a ``PluginTransportSink``), the process's
/// exit, and time from its ``PluginClock``; its outputs are writes, kills and signals on the transport, armed
/// timers on the clock, log lines and trace records, and ``Event``s for its owner. It never touches libuv or the
/// system itself, so its rules are tested on a manual clock with no process (`PluginSessionTests`), and what carries
/// it can be swapped.
///
/// - Important: Loop thread only.
final class PluginSession {
    enum State: Equatable { case starting, ready, stopping, terminated }

    /// What the session reports to its owner.
    enum Event {
        /// The handshake completed; the route table is in the result.
        case ready(InitializeRequest.Result)
        /// The handshake failed; the process is being killed (a `.terminated` follows).
        case handshakeFailed(ResponseError)
        /// A request from the plugin (other than `$/ping`, answered here). Answer with ``respond(to:encodedResult:)``.
        case request(id: RequestID, method: String, params: JSONValue?)
        /// A notification from the plugin (other than `log`, logged here).
        case notification(method: String, params: JSONValue?)
        /// A line that was not a valid message, or a message that broke the protocol.
        case violation(ResponseError)
        /// A request to the plugin timed out.
        case requestTimedOut(method: String)
        /// The process ended and every stream is closed. Pending requests have failed with `pluginUnavailable`.
        case terminated(PluginTermination)
    }

    let name: String
    let plugin: ResolvedPlugin
    private(set) var logger: Logger
    /// The host's protocol trace; `trace.isOn` is the only thing the I/O paths test while nothing records.
    private let trace: ProtocolTrace
    var onEvent: (Event) -> Void = { _ in }

    private(set) var state = State.starting
    /// What carries the session. Loop-confined, like the session. A `let`: every message reaches it several times,
    /// and a constant is read without a retain and release each time (a swap of what carries a plugin is a new
    /// session on the new transport, taking over from this one).
    let transport: any PluginTransport
    private let clock: any PluginClock
    private(set) var routeTable: InitializeRequest.Result?
    private var reader: MessageReader
    private var stderr: StderrForwarder

    /// Ids, pending requests and deadlines (the protocol's bookkeeping, shared with the SDK and the control client),
    /// on the running clock: the host's own stalls do not count.
    private let endpoint = RPCEndpoint()
    /// Set by the endpoint's `send` when a request's line could not be written, so ``beginRequest`` fails just it.
    private var writeFailure: ResponseError?
    private var armedDeadline: UInt64 = .max
    /// A deadline verdict is waiting for the next poll (see ``judgeDeadlines()``).
    private var deadlineJudgementPending = false

    private(set) var exitStatus: TerminationStatus?
    private var outputClosed = false
    private var errorsClosed = false
    private(set) var killReason: String?
    private var stopRequested = false
    private var handshakeFailureReported = false
    /// The shutdown ladder's steps not taken yet, and the last one taken.
    private var ladder: (remaining: ArraySlice<TeardownStep>, previous: TeardownStep?) = ([], nil)

    /// How many times the supervisor restarted this plugin before this process (sent in `initialize`).
    let restarts: Int
    // The rules, as values (PluginPolicies.swift); the session applies them. Every `now` they get is the running
    // clock read after a poll (spec §6.1), but for the message rate, which real time refills.
    private var admission: AdmissionPolicy
    private var heartbeat: HeartbeatPolicy
    private var writeQueue: WriteQueuePolicy
    /// Messages dropped over the rate.
    private var droppedOverRate = 0
    /// While the current second's stderr budget is spent: the drop counters (the transport's, the forwarder's) when
    /// dropping began, so its end can say how much that second dropped.
    private var stderrDropWindow: (transport: Int, forwarder: Int)?
    /// Stderr bytes dropped over the rate, over this process's life.
    private(set) var droppedErrorBytes = 0
    private var heartbeatJudgementPending = false
    /// A message was read since the heartbeat last heard of the plugin (see ``noteHeard()``).
    private var heardInRead = false

    /// Counters for status and benchmarks.
    private(set) var messagesReceived = 0
    private(set) var messagesSent = 0
    /// Requests either way (heartbeats aside): what tells a plugin that serves from an idle one (spec §20.3).
    private(set) var requestCount = 0
    /// Called once no request to the plugin is pending (an upgrade's drain, spec §20.1).
    private var drainWaiters: [() -> Void] = []
    private(set) var spawnedAt: UInt64 = 0
    /// Why the start failed, when it did: the supervisor retries a lack of resources, not a missing executable.
    private(set) var startFailure: UVError?
    private(set) var readyAt: UInt64 = 0

    var pid: Int32 { transport.pid }
    var pendingRequestCount: Int { endpoint.pendingCount }
    /// The methods awaiting an answer, with how many of each (an upgrade's drain names them when it gives up).
    var pendingMethods: [String: Int] { endpoint.pendingMethods }
    /// Bytes queued towards the plugin that it has not read yet.
    var queuedBytes: Int { transport.queuedBytes }
    /// The plugin's last stderr lines.
    var stderrTail: [String] { stderr.tail() }

    init(
        plugin: ResolvedPlugin, transport: any PluginTransport, clock: any PluginClock, logger: Logger,
        trace: ProtocolTrace, restarts: Int = 0
    ) {
        self.name = plugin.name
        self.plugin = plugin
        self.transport = transport
        self.clock = clock
        self.trace = trace
        self.restarts = restarts
        self.admission = AdmissionPolicy(plugin.limits)
        self.heartbeat = HeartbeatPolicy(intervalMs: 0, timeoutMs: 0, now: 0)
        self.writeQueue = WriteQueuePolicy(
            limitBytes: plugin.maxWriteQueueBytes, windowMs: plugin.limits.heartbeatTimeoutMs)
        var logger = logger
        logger[metadataKey: "plugin"] = .string(plugin.name)
        self.logger = logger
        self.reader = MessageReader(maxLineLength: plugin.limits.maxLineBytes)
        self.stderr = StderrForwarder(maxBytesPerSecond: plugin.limits.maxStderrBytesPerSecond)
        endpoint.send = { [weak self] line in
            guard let self else { return }
            self.writeFailure = self.writeLine(line)
        }
        clock.onFire = { [weak self] timer in self?.fired(timer) }
    }

    // MARK: - Start and handshake

    /// Starts the plugin and sends `initialize`. Failures arrive as events (`handshakeFailed`, `terminated`).
    func start() {
        spawnedAt = clock.nanoseconds
        do throws(UVError) {
            try transport.start(self)
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
            clock.close()
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
        let supported: JSONValue = .array(ProtocolVersion.supported.map { .int(Int64($0)) })
        switch result {
        case .failure(let error):
            let failure: ResponseError
            switch error.code {
            case .unsupportedProtocolVersion:
                let theirs = error.data?["supported"].map { "\($0)" } ?? "unknown"
                failure = .handshake(
                    name, .unsupportedProtocolVersion,
                    "it speaks protocol versions \(theirs), the host speaks \(ProtocolVersion.supported)",
                    data: ["supported": supported])
            case .timeout:
                failure = .handshake(
                    name, .timeout,
                    "no answer to 'initialize' within \(plugin.startTimeoutMs) ms (the manifest entry's startTimeoutMs: raise it for a plugin that needs longer to start)",
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
                        data: ["supported": supported]))
                return
            }
            routeTable = answer
            state = .ready
            readyAt = clock.nanoseconds
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
        let error = withStderrTail(error)
        logger.error("\(error.message)\(error.authorDetails.map { "\n" + $0 } ?? "")")
        onEvent(.handshakeFailed(error))
        kill(reason: "handshake failed")
    }

    /// `error` with the plugin's last stderr lines in `data.stderr` (and its name in `data.plugin`), so the author
    /// of a plugin that failed sees the traceback that led there. What the plugin put in `data` is kept; a `data`
    /// that is not an object (outside the spec) is left alone.
    private func withStderrTail(_ error: ResponseError) -> ResponseError {
        // Written before the answer or exit being handled, it may still sit unread in the other pipe.
        if !errorsClosed { transport.readPendingErrors() }
        let tail = stderr.tail()
        guard !tail.isEmpty, error.data == nil || error.data?.objectValue != nil else { return error }
        var data = error.data?.objectValue ?? JSONObject()
        if data["stderr"] == nil { data["stderr"] = .array(tail.map(JSONValue.string)) }
        if data["plugin"] == nil { data["plugin"] = .string(name) }
        var copy = error
        copy.data = .object(data)
        return copy
    }

    private var exitDescription: String {
        guard let exitStatus else { return "closed its stdout" }
        return "\(exitStatus)"
    }
}

// MARK: - Requests out

extension PluginSession {
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

    /// Sends a typed request whose params write their own JSON (``JSONWritable``): no `JSONValue` is built for them.
    /// `readingBytes` reads the answer's result straight from its bytes where it can (no tree at all), `reading`
    /// from the tree where it can; otherwise Codable decodes it, and names what is wrong.
    func send<R: HostToPluginRequest>(
        encoding type: R.Type, _ params: R.Params, reading: ((JSONValue) -> R.Result?)? = nil,
        readingBytes: ((ArraySlice<UInt8>, Int) -> R.Result?)? = nil,
        _ completion: @escaping (Result<R.Result, ResponseError>) -> Void
    ) where R.Params: JSONWritable {
        var writer = JSONWriter(capacity: 256)
        params.write(to: &writer)
        let bytes = writer.bytes
        let answer: (Result<JSONValue, ResponseError>) -> Void = { [name] result in
            if let reading, case .success(let value) = result, let read = reading(value) {
                completion(.success(read))
            } else {
                completion(Self.decodeAnswer(R.self, result, plugin: name))
            }
        }
        let readResult: RPCEndpoint.ResultReader? = readingBytes.map { read in
            { [maxDepth = reader.maxDepth] bytes in
                read(bytes, maxDepth).map { value in { completion(.success(value)) } }
            }
        }
        beginRequest(method: R.method, timeoutMs: nil, answer) { endpoint, deadline, timeout in
            endpoint.request(
                R.method, encodedParams: bytes, deadline: deadline, timeoutMs: timeout, readResult: readResult,
                completion: answer)
        }
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

    /// Sends a typed request and suspends until its answer, its error, its timeout or the plugin's end, whichever
    /// comes first. Every request ends exactly once (the endpoint fails what is pending when the plugin ends), so
    /// the continuation is always resumed.
    func request<R: HostToPluginRequest>(_ type: R.Type, _ params: R.Params) async -> Result<R.Result, ResponseError> {
        await withCheckedContinuation { continuation in send(type, params) { continuation.resume(returning: $0) } }
    }

    /// ``send(encoding:_:reading:readingBytes:_:)`` suspended until the answer.
    func request<R: HostToPluginRequest>(
        encoding type: R.Type, _ params: R.Params, reading: ((JSONValue) -> R.Result?)? = nil,
        readingBytes: ((ArraySlice<UInt8>, Int) -> R.Result?)? = nil
    ) async -> Result<R.Result, ResponseError> where R.Params: JSONWritable {
        await withCheckedContinuation { continuation in
            send(encoding: type, params, reading: reading, readingBytes: readingBytes) {
                continuation.resume(returning: $0)
            }
        }
    }

    /// ``sendRaw(method:params:timeoutMs:_:)`` suspended until the answer.
    func requestRaw(method: String, params: JSONValue?) async -> Result<JSONValue, ResponseError> {
        await withCheckedContinuation { continuation in
            sendRaw(method: method, params: params) { continuation.resume(returning: $0) }
        }
    }

    /// Calls `body` once no request to the plugin is pending (at once when none is, or the plugin has ended): every
    /// request ends exactly once, by its answer, its deadline or the plugin's end.
    func whenNoRequestsPending(_ body: @escaping () -> Void) {
        guard endpoint.pendingCount > 0, state != .terminated else {
            body()
            return
        }
        drainWaiters.append(body)
    }

    func checkDrained() {
        guard !drainWaiters.isEmpty, endpoint.pendingCount == 0 || state == .terminated else { return }
        let waiters = drainWaiters
        drainWaiters.removeAll()
        for waiter in waiters { waiter() }
    }

    /// Runs `body` with the plugin's input corked: the requests it sends (a restore's batch of `coordinator/create`)
    /// leave in gathered writes of up to 64 KiB, not one syscall each.
    func batchingWrites(_ body: () -> Void) {
        transport.cork()
        defer { transport.uncork() }
        body()
    }

    /// Sends a typed notification.
    func notify<N: HostToPluginNotification>(_ type: N.Type, _ params: N.Params) {
        guard let value = try? Coding.encode(params) else { return }
        _ = writeLine(Message.notification(method: N.method, params: value).encodedLine())
    }

    /// Sends a typed notification whose params write their own JSON.
    func notify<N: HostToPluginNotification>(encoding type: N.Type, _ params: N.Params) where N.Params: JSONWritable {
        var writer = JSONWriter(capacity: 128)
        params.write(to: &writer)
        _ = writeLine(Message.notificationLine(method: N.method, encodedParams: writer.bytes))
    }

    /// Answers a request the plugin sent with a result already encoded as JSON.
    func respond(to id: RequestID, encodedResult: [UInt8]) {
        admission.endRequest(id)
        _ = writeLine(Message.responseLine(id: id, encodedResult: encodedResult))
    }

    /// Answers a request the plugin sent with an error.
    func respond(to id: RequestID, error: ResponseError) {
        admission.endRequest(id)
        _ = writeLine(Message.errorResponse(id: id, error: error).encodedLine())
    }

    /// A plugin's answer as `R.Result`; one that does not decode is an `invalidAnswer` naming the plugin.
    static func decodeAnswer<R: HostToPluginRequest>(
        _ type: R.Type, _ result: Result<JSONValue, ResponseError>, plugin name: String
    ) -> Result<R.Result, ResponseError> {
        switch result {
        case .failure(let error): return .failure(error)
        case .success(let value):
            do {
                return .success(try Coding.decode(R.Result.self, from: value))
            } catch {
                let base = ResponseError.invalidParams(method: R.method, error)
                return .failure(
                    ResponseError(
                        .invalidAnswer,
                        "plugin '\(name)' answered '\(R.method)' with an invalid result: \(base.message)",
                        data: base.adding("plugin", .string(name)).data))
            }
        }
    }

    /// Checks that the plugin takes requests now (it is starting or ready, and reads its input), then hands the
    /// endpoint a deadline to send with (`request`); what cannot be sent fails `completion` at once.
    private func beginRequest(
        method: String, timeoutMs: Int?, _ completion: @escaping (Result<JSONValue, ResponseError>) -> Void,
        _ request: (RPCEndpoint, UInt64, Int) -> RequestID
    ) {
        guard state == .starting || state == .ready || (state == .stopping && method == ShutdownRequest.method) else {
            completion(.failure(.pluginUnavailable(name, "it is \(state)")))
            return
        }
        // New requests are refused (not queued) while the plugin is behind on reading, so a caller gets
        // back-pressure at once and host memory stays bounded; the plugin itself is judged by `judgeWriteStall`.
        if writeQueue.refusesRequests(queued: queuedBytes), method != ShutdownRequest.method {
            completion(.failure(notReadingError(queued: queuedBytes)))
            return
        }
        let timeout = timeoutMs ?? plugin.limits.requestTimeoutMs
        let deadline = clock.runningNow + UInt64(timeout)
        requestCount &+= 1
        writeFailure = nil
        let id = request(endpoint, deadline, timeout)
        if let error = writeFailure {
            writeFailure = nil
            endpoint.cancel(id, error: error)
            return
        }
        // One timer for the earliest deadline; moved only when a sooner one comes (O(1) per request).
        if deadline < armedDeadline { armDeadline(deadline) }
    }

    /// Writes one encoded line (what the endpoint hands over, too); returns an error instead of throwing so callers
    /// can fail just their request.
    private func writeLine(_ line: [UInt8]) -> ResponseError? {
        guard transport.canWrite else { return .pluginUnavailable(name, "its stdin is closed") }
        let queued = transport.queuedBytes
        if !writeQueue.fits(line.count, queued: queued) {
            // The hard bound on host memory: answers and notifications may overrun the soft limit (refusing them
            // would lose them), but not without end.
            kill(
                reason:
                    "stopped reading its stdin (\(queued) bytes queued, twice the limit of \(plugin.maxWriteQueueBytes))"
            )
            return notReadingError(queued: queued)
        }
        do {
            try transport.write(line)
        } catch {
            return .pluginUnavailable(name, "writing failed: \(error)")
        }
        messagesSent += 1
        if trace.isOn {
            trace.message(
                line.last == 0x0A ? line.dropLast() : line[...], plugin: name, pid: pid, direction: .out,
                logger: logger)
        }
        // The running clock is read only past the limit: every message to every plugin passes here.
        let queuedAfter = transport.queuedBytes
        if queuedAfter > plugin.maxWriteQueueBytes, writeQueue.wrote(queued: queuedAfter, now: clock.runningNow) {
            beginWriteStall()
        }
        return nil
    }

    private func notReadingError(queued: Int) -> ResponseError {
        ResponseError(
            .limitExceeded, "plugin '\(name)' is not reading its stdin (\(queued) bytes queued)",
            data: ["plugin": .string(name), "queuedBytes": .int(Int64(queued)), "limit": "maxWriteQueueBytes"])
    }
}

// MARK: - Reading: every line from the plugin's output is framed, parsed strictly and classified

extension PluginSession: PluginTransportSink {
    func outputReceived(_ bytes: [UInt8]) {
        // A plugin being killed (quarantined, hung, not reading) has nothing more to say: what it still had in the
        // pipe is drained unparsed, so a flood costs nothing once it has been caught.
        guard killReason == nil else { return }
        reader.append(bytes)
        // What is sent to the plugin while its lines are handled (answers, the next requests of a pipelined burst)
        // leaves in one write when the chunk is done, not one syscall per line.
        transport.cork()
        defer { transport.uncork() }
        if trace.isOn {
            while state != .terminated, killReason == nil, let next = reader.nextWithLine() {
                traceRead(next.event, next.line)
                handle(next.event)
            }
        } else {
            while state != .terminated, killReason == nil, let next = reader.nextKeepingAnswers() {
                switch next {
                case .event(let event):
                    handle(event)
                case .answer(let id, let line, let result, let lineNumber):
                    // The request's own reader takes the result from its bytes; anything else is read as usual.
                    if endpoint.receive(answer: id, result: line[result]) {
                        heard()
                    } else {
                        handle(
                            MessageReader.decodeAnswer(
                                line, id: id, result: result, lineNumber: lineNumber, maxDepth: reader.maxDepth))
                    }
                }
            }
        }
        noteHeard()
        if !drainWaiters.isEmpty { checkDrained() }
    }

    /// How long a plugin whose stdout ended has to exit on its own. A process that closes its stdout as it exits
    /// can take a while to be reaped on a busy machine (a 200 ms grace killed such a plugin beside a loaded test
    /// run, which then reported the kill instead of its exit code); one that keeps running is still caught long
    /// before any request's deadline.
    static let outputEndedGraceMs: UInt64 = 1_000

    func outputEnded() {
        // A condemned plugin's unterminated remainder is not one more line to judge (nor to log twice).
        if let last = reader.finishWithLine(), killReason == nil {
            if trace.isOn { traceRead(last.event, last.line) }
            handle(last.event)
            noteHeard()
        }
        outputClosed = true
        // The protocol stream has ended, but the process may still run (it closed its stdout, or what carries it
        // ended the stream): it can no longer answer, so it is given the exit's grace to exit on its own, then
        // killed, rather than left to a request's deadline. A crash closes stdout first and is still a crash.
        if exitStatus == nil, killReason == nil, !stopRequested, state == .starting || state == .ready {
            clock.arm(.outputEnded, afterMs: Self.outputEndedGraceMs)
        }
        checkTerminated()
    }

    func errorsReceived(_ bytes: [UInt8]) {
        let droppedBefore = stderr.droppedBytes
        let (lines, overBudgetUntil) = stderr.consume(bytes, now: clock.wallNow)
        // At notice, the CLI's default level: what a plugin prints is how its author debugs it.
        for line in lines { logger.notice("\(line)") }
        // Over its budget, the rest of the second is drained and dropped by the transport (no copy, no line
        // splitting): the plugin is never held back in write(2), which would stop it answering its heartbeat.
        guard let until = overBudgetUntil, stderrDropWindow == nil, !errorsClosed else { return }
        stderrDropWindow = (transport: transport.discardedErrorBytes, forwarder: droppedBefore)
        transport.discardErrors()
        let now = clock.wallNow
        clock.arm(.stderrWindow, afterMs: until > now ? until - now : 1)
    }

    /// Ends a second that dropped stderr: reading resumes for the next one, and one line says how much was dropped
    /// (journald's "Suppressed N messages"), rather than a line per chunk.
    private func endStderrDropWindow() {
        guard let since = stderrDropWindow else { return }
        stderrDropWindow = nil
        clock.cancel(.stderrWindow)
        transport.keepErrors()
        let dropped = stderr.droppedBytes - since.forwarder + transport.discardedErrorBytes - since.transport
        droppedErrorBytes += dropped
        guard dropped > 0 else { return }
        logger.warning(
            "plugin '\(name)' wrote more stderr than maxStderrBytesPerSecond (\(plugin.limits.maxStderrBytesPerSecond)) allows: dropped \(dropped) bytes in one second (\(droppedErrorBytes) in all); it was not held back"
        )
    }

    func errorsEnded() {
        endStderrDropWindow()
        for line in stderr.finish() { logger.notice("\(line)") }
        errorsClosed = true
        checkTerminated()
    }

    func exited(_ status: TerminationStatus) {
        exitStatus = status
        transport.killStragglers()
        // The exit can be reported before the last output is read: give the streams a moment to reach their end.
        if !(outputClosed && errorsClosed) { clock.arm(.exitGrace, afterMs: 200) }
        checkTerminated()
    }

    private func handle(_ event: MessageReader.Event) {
        switch event {
        case .violation(let violation):
            let named = violation.error.naming(plugin: name)
            if let id = violation.requestID { respond(to: id, error: named) }
            // An answer over maxLineBytes fails the request it answers now, naming the limit and the line's size,
            // rather than leaving it to its deadline (and the plugin to a hung verdict) while the line is dropped.
            if let id = violation.answerID, endpoint.isPending(id) {
                _ = endpoint.receive(.errorResponse(id: id, error: named))
            }
            report(named)
        case .message(let message, let lineNumber):
            heard()
            switch message {
            case .response(let id, _):
                // Answers to the host's own requests are bounded by the host's sending, so they take no token: a
                // pipelined burst the host asked for must not look like a flood. One table lookup resolves them.
                if case .resolved = endpoint.receive(message) { return }
                guard withinRate(message, lineNumber: lineNumber) else { return }
                unmatchedAnswer(id, lineNumber: lineNumber)
            case .errorResponse(let id?, let error) where error.code == .internalError && endpoint.isPending(id):
                // A handler of the plugin failed: the answer carries the plugin's stderr tail (spec §7).
                endpoint.receive(.errorResponse(id: id, error: withStderrTail(error)))
            case .errorResponse(let id?, _):
                if case .resolved = endpoint.receive(message) { return }
                guard withinRate(message, lineNumber: lineNumber) else { return }
                unmatchedAnswer(id, lineNumber: lineNumber)
            case .errorResponse(nil, let error):
                guard withinRate(message, lineNumber: lineNumber) else { return }
                report(
                    ResponseError(
                        .invalidRequest, "line \(lineNumber): error response without an id: \(error.message)",
                        data: ["line": .int(Int64(lineNumber))]
                    ).naming(plugin: name))
            case .request(let id, let method, let params):
                guard withinRate(message, lineNumber: lineNumber) else { return }
                received(request: id, method: method, params: params, lineNumber: lineNumber)
            case .notification(let method, let params):
                guard withinRate(message, lineNumber: lineNumber) else { return }
                if method == LogNotification.method {
                    log(params)
                } else {
                    onEvent(.notification(method: method, params: params))
                }
            }
        }
    }

    /// A message was read in this chunk (any message shows the plugin is alive: the heartbeat need not ask).
    private func heard() {
        messagesReceived += 1
        heardInRead = true
    }

    /// A request from the plugin: `$/ping` is answered here; the rest goes to the owner once admitted.
    private func received(request id: RequestID, method: String, params: JSONValue?, lineNumber: Int) {
        if method == PingRequest.method {
            _ = writeLine(Message.response(id: id, result: .object(JSONObject())).encodedLine())
            return
        }
        guard state == .ready else {
            respond(
                to: id,
                error: ResponseError(
                    .notInitialized, "'\(method)' before the handshake completed", data: ["method": .string(method)]))
            return
        }
        requestCount &+= 1
        let verdict = admission.beginRequest(id)
        guard verdict == .accepted else {
            let error =
                verdict == .duplicateID
                ? ResponseError(
                    .invalidRequest, "line \(lineNumber): request id \(id) is already in use",
                    data: ["line": .int(Int64(lineNumber)), "field": "id"])
                : ResponseError(
                    .limitExceeded,
                    "line \(lineNumber): more than \(plugin.limits.maxOutstandingRequests) requests outstanding",
                    data: ["line": .int(Int64(lineNumber)), "limit": "maxOutstandingRequests"])
            let named = error.naming(plugin: name)
            _ = writeLine(Message.errorResponse(id: id, error: named).encodedLine())
            report(named)
            return
        }
        onEvent(.request(id: id, method: method, params: params))
    }

    /// Records a line read from the plugin in the protocol trace.
    private func traceRead(_ event: MessageReader.Event, _ line: ArraySlice<UInt8>?) {
        switch event {
        case .message: trace.message(line ?? [], plugin: name, pid: pid, direction: .in, logger: logger)
        case .violation(let violation):
            trace.invalidLine(
                line, error: violation.error.naming(plugin: name), plugin: name, pid: pid, logger: logger)
        }
    }

    /// An answer to no pending request of the endpoint: the heartbeat's, or a protocol error.
    private func unmatchedAnswer(_ id: RequestID, lineNumber: Int) {
        if heartbeat.answered(id) { return }
        report(
            ResponseError(
                .invalidRequest, "line \(lineNumber): response to unknown request id \(id)",
                data: ["line": .int(Int64(lineNumber)), "field": "id"]
            ).naming(plugin: name))
    }

    /// Anything from the plugin proves it alive: the running clock is read once per read, not per message.
    private func noteHeard() {
        guard heardInRead else { return }
        heardInRead = false
        heartbeat.heard(now: clock.runningNow)
    }

    /// A protocol error: logged, reported, and counted; more than `maxProtocolErrors` within 10 s quarantines the
    /// plugin (killed; its supervisor's policy decides whether it comes back).
    private func report(_ error: ResponseError, log: Bool = true) {
        guard killReason == nil else { return }
        if log { logger.warning("\(error.message)") }
        onEvent(.violation(error))
        guard state == .ready || state == .starting else { return }
        // The window is running time: a backlog read after the host's own stall must not look like a burst.
        if admission.recordError(now: clock.runningNow) {
            kill(
                reason:
                    "quarantined: \(admission.errorsInWindow) protocol errors within \(admission.errorWindowMs / 1_000) s (last: \(error.message))"
            )
        }
    }

    /// Takes a token for one message; a message over the rate is a protocol error (a request is answered with
    /// `-32004`), logged for the first and every 10,000th, not for each. Answers to pending requests never come
    /// here (see ``handle(_:)``); unsolicited ones (unknown ids) count.
    private func withinRate(_ message: Message, lineNumber: Int) -> Bool {
        // The rate is refilled by real time, not running time: the plugin really had that time to send in.
        if admission.takeToken(now: clock.wallNow) { return true }
        let error = ResponseError(
            .limitExceeded, "line \(lineNumber): more than \(plugin.limits.maxMessagesPerSecond) messages per second",
            data: ["line": .int(Int64(lineNumber)), "limit": "maxMessagesPerSecond"]
        ).naming(plugin: name)
        if case .request(let id, _, _) = message {
            _ = writeLine(Message.errorResponse(id: id, error: error).encodedLine())
        }
        droppedOverRate += 1
        report(error, log: droppedOverRate % 10_000 == 1)
        return false
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
}

// MARK: - Time: every verdict waits for the next poll, on the running clock (spec §6.1)

extension PluginSession {
    private func fired(_ timer: SessionTimer) {
        switch timer {
        case .deadline:
            guard !deadlineJudgementPending else { return }
            deadlineJudgementPending = true
            clock.afterNextPoll { [weak self] in self?.judgeDeadlines() }
        case .heartbeat:
            guard !heartbeatJudgementPending else { return }
            heartbeatJudgementPending = true
            clock.afterNextPoll { [weak self] in self?.heartbeatTick() }
        case .writeStall:
            clock.afterNextPoll { [weak self] in self?.judgeWriteStall() }
        case .ladder:
            runLadder()
        case .outputEnded:
            // A verdict like any other: judged after the poll, where an exit that a stalled loop has not yet read is
            // seen first (libuv runs timers before it polls).
            clock.afterNextPoll { [weak self] in
                guard let self, self.exitStatus == nil, self.state != .terminated else { return }
                self.kill(reason: "its stdout ended while it kept running: it can no longer answer")
            }
        case .exitGrace:
            outputClosed = true
            errorsClosed = true
            checkTerminated()
        case .stderrWindow:
            endStderrDropWindow()
        }
    }

    private func armDeadline(_ deadline: UInt64) {
        armedDeadline = deadline
        let now = clock.runningNow
        clock.arm(.deadline, afterMs: deadline > now ? deadline - now : 0)
    }

    /// A request unanswered by its deadline fails with `timeout`; a ready plugin that does not answer is hung and
    /// is killed like a crash (its supervisor's policy decides what next). The handshake and the shutdown ladder
    /// handle their own deadlines.
    private func judgeDeadlines() {
        deadlineJudgementPending = false
        armedDeadline = .max
        guard state != .terminated else { return }
        let expired = endpoint.expire(now: clock.runningNow) { [name] request in
            .timeout(name, method: request.method, milliseconds: request.timeoutMs ?? 0)
        }
        for request in expired {
            if state != .terminated { onEvent(.requestTimedOut(method: request.method)) }
            if state == .ready && request.method != InitializeRequest.method {
                kill(reason: "hung: no answer to '\(request.method)' within \(request.timeoutMs ?? 0) ms")
            }
        }
        if state != .terminated, let next = endpoint.nextDeadline { armDeadline(next) }
        if !drainWaiters.isEmpty { checkDrained() }
    }

    /// Pings the plugin when it has been silent for `heartbeatIntervalMs`; a ping unanswered for
    /// `heartbeatTimeoutMs` means it is hung (stopped, deadlocked, spinning) and it is killed like a crash.
    private func startHeartbeat() {
        heartbeat = HeartbeatPolicy(
            intervalMs: plugin.limits.heartbeatIntervalMs, timeoutMs: plugin.limits.heartbeatTimeoutMs,
            now: clock.runningNow)
        guard heartbeat.isEnabled else { return }
        clock.arm(.heartbeat, afterMs: heartbeat.tickMs, repeatMs: heartbeat.tickMs)
    }

    private func heartbeatTick() {
        heartbeatJudgementPending = false
        guard state == .ready else { return }
        switch heartbeat.tick(now: clock.runningNow) {
        case .none:
            break
        case .ping(let id):
            _ = writeLine(
                Message.request(id: .string(id), method: PingRequest.method, params: .object(JSONObject()))
                    .encodedLine())
        case .hung:
            kill(
                reason:
                    "hung: no answer to the heartbeat $/ping within \(plugin.limits.heartbeatTimeoutMs) ms of running time"
            )
        }
    }

    // A full write queue is evidence only if it stays full: a healthy plugin on a starved machine reads slowly but
    // it reads. The verdict "stopped reading" needs `heartbeatTimeoutMs` of running time in which the queue did not
    // shrink at all.

    private func beginWriteStall() {
        logger.warning(
            "plugin '\(name)' stopped reading its stdin (\(queuedBytes) bytes queued, limit \(plugin.maxWriteQueueBytes)): requests are refused; it is killed unless it reads within \(writeQueue.windowMs) ms"
        )
        clock.arm(.writeStall, afterMs: writeQueue.windowMs)
    }

    private func judgeWriteStall() {
        guard state != .terminated else { return }
        let queued = queuedBytes
        switch writeQueue.judge(queued: queued, now: clock.runningNow) {
        case .recovered:
            logger.notice("plugin '\(name)' reads its stdin again (\(queued) bytes queued)")
        case .checkAgain(let milliseconds):
            clock.arm(.writeStall, afterMs: milliseconds)
        case .notReading(let milliseconds):
            kill(
                reason:
                    "stopped reading its stdin (\(queued) bytes queued, limit \(plugin.maxWriteQueueBytes), nothing read for \(milliseconds) ms)"
            )
        }
    }
}

// MARK: - Ending: kills, the shutdown ladder, exit classification

extension PluginSession {
    /// Kills the process group at once (SIGKILL). The reason is kept for the termination report.
    func kill(reason: String) {
        // One verdict per process, logged once: later evidence against a condemned plugin changes nothing.
        guard state != .terminated, killReason == nil, exitStatus == nil else { return }
        killReason = reason
        logger.warning("killing plugin '\(name)': \(reason)")
        transport.signal(SIGKILL)
    }

    /// Sends a signal to the plugin's process group (for fault experiments: SIGSTOP, SIGCONT).
    func signal(_ number: Int32) {
        guard state != .terminated, exitStatus == nil else { return }
        transport.signal(number)
    }

    /// Runs the shutdown ladder: `shutdown` request, `exit` notification, stdin closed, SIGTERM after `graceMs`,
    /// SIGKILL after another `graceMs`. Completion is the `.terminated` event.
    func stop(graceMs: Int = 2_000, shutdownTimeoutMs: Int = 1_000) {
        guard !stopRequested, state != .terminated else { return }
        stopRequested = true
        let steps = TeardownStep.ladder(
            graceMs: graceMs, shutdownTimeoutMs: shutdownTimeoutMs, ready: state == .ready, term: SIGTERM, kill: SIGKILL
        )
        state = .stopping
        ladder = (steps[...], nil)
        runLadder()
    }

    /// Takes the ladder's next step: it acts, then waits for the exit (which ends the ladder through
    /// ``checkTerminated()``) or for its time to run out.
    private func runLadder() {
        guard let step = ladder.remaining.first, state != .terminated, exitStatus == nil else { return }
        let previous = ladder.previous
        ladder = (ladder.remaining.dropFirst(), step)
        switch step {
        case .shutdownRequest:
            sendRaw(method: ShutdownRequest.method, params: .object(JSONObject()), timeoutMs: step.waitMs) {
                [weak self] _ in
                guard let self, self.state != .terminated else { return }
                _ = self.writeLine(Message.notification(method: ExitNotification.method, params: nil).encodedLine())
                self.runLadder()
            }
            return
        case .closeStdin:
            transport.closeInput()
        case .signal(let number, _):
            switch (previous, number) {
            case (.closeStdin?, _):
                logger.notice("plugin '\(name)' did not exit after stdin closed; sending SIGTERM")
            case (.signal?, SIGKILL):
                logger.warning("plugin '\(name)' ignored SIGTERM; sending SIGKILL")
                if killReason == nil { killReason = "ignored SIGTERM during shutdown" }
            default:
                logger.notice("plugin '\(name)': shutdown ladder sends signal \(number)")
            }
            transport.signal(number)
        }
        guard !ladder.remaining.isEmpty else { return }
        clock.arm(.ladder, afterMs: UInt64(max(0, step.waitMs)))
    }

    /// Ends the session once the process has exited and both streams are closed: classifies the end, fails what is
    /// pending, and tells the owner.
    private func checkTerminated() {
        guard state != .terminated, let exitStatus, outputClosed, errorsClosed else { return }
        let wasStarting = state == .starting
        state = .terminated
        transport.close()
        clock.close()
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
        let termination = PluginTermination(status: exitStatus, cause: cause, stderrTail: stderr.tail())
        if wasStarting && !handshakeFailureReported {
            handshakeFailureReported = true
            // Every byte of stderr has been read by now: a traceback printed at import is all in the error.
            let error = withStderrTail(
                .handshake(name, .pluginUnavailable, "it \(termination.clause) before answering 'initialize'"))
            logger.error("\(error.message)\(error.authorDetails.map { "\n" + $0 } ?? "")")
            onEvent(.handshakeFailed(error))
        }
        endpoint.close(.pluginUnavailable(name, "\(termination)"))
        checkDrained()
        switch cause {
        case .stopped, .exitedCleanly: logger.debug("plugin '\(name)' \(termination)")
        default: logger.warning("plugin '\(name)' \(termination)")
        }
        onEvent(.terminated(termination))
    }
}

extension TeardownStep {
    /// How long this step waits for the process to exit before the next.
    var waitMs: Int {
        switch self {
        case .shutdownRequest(let wait), .closeStdin(let wait), .signal(_, let wait): wait
        }
    }
}

/// The host's version, reported in `initialize`.
public let switchyardVersion = "0.1.0"
