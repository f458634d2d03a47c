import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardUV

// Reading: every line from stdout is framed, parsed strictly and classified; stderr goes to the log.
extension PluginConnection {
    // MARK: - Reading

    func stdoutEvent(_ event: UVPipe.ReadEvent) {
        switch event {
        case .data(let bytes):
            // A plugin being killed (quarantined, hung, not reading) has nothing more to say: what it still had in
            // the pipe is drained unparsed, so a flood costs nothing once it has been caught.
            guard killReason == nil else { return }
            reader.append(bytes)
            // What is sent to the plugin while its lines are handled (answers, the next requests of a pipelined
            // burst) leaves in one write when the chunk is done, not one syscall per line.
            let stdin = process?.stdin
            stdin?.cork()
            defer { stdin?.uncork() }
            if trace.isOn {
                while state != .terminated, killReason == nil, let next = reader.nextWithLine() {
                    traceRead(next.event, next.line)
                    handle(next.event)
                }
            } else {
                while state != .terminated, killReason == nil, let next = reader.next() { handle(next) }
            }
            noteHeard()
            // libuv reads up to 2 MB from one pipe per iteration: a flooding plugin would hold the loop (seen: 7 s on
            // a loaded machine). Every 256 KiB, the loop polls once before this plugin is read again.
            stdoutBytesSinceYield += bytes.count
            if stdoutBytesSinceYield >= Self.stdoutBytesPerTurn { yieldStdout() }
        case .eof, .error:
            // A condemned plugin's unterminated remainder is not one more line to judge (nor to log twice).
            if let last = reader.finishWithLine(), killReason == nil {
                if trace.isOn { traceRead(last.event, last.line) }
                handle(last.event)
                noteHeard()
            }
            stdoutClosed = true
            process?.stdout?.close()
            checkTerminated()
        }
    }

    func stderrEvent(_ event: UVPipe.ReadEvent) {
        switch event {
        case .data(let bytes):
            let (lines, startedDropping) = stderr.consume(bytes, now: loop.now)
            // At notice, the CLI's default level: what a plugin prints is how its author debugs it.
            for line in lines { logger.notice("\(line)") }
            if startedDropping {
                report(ResponseError(
                    .limitExceeded, "plugin '\(name)' writes more than \(plugin.limits.maxStderrBytesPerSecond) stderr bytes per second; the excess is dropped",
                    data: ["plugin": .string(name), "limit": "maxStderrBytesPerSecond"]))
            }
            if let wait = stderr.pause(now: loop.now) { pauseStderr(forMs: wait) }
        case .eof, .error:
            for line in stderr.finish() { logger.notice("\(line)") }
            if stderr.droppedBytes > 0 {
                logger.warning("dropped \(stderr.droppedBytes) stderr bytes over the rate limit")
            }
            stderrClosed = true
            process?.stderr?.close()
            checkTerminated()
        }
    }

    /// Stops reading stdout until the loop has polled once more, so the other plugins and clients are served.
    func yieldStdout() {
        stdoutBytesSinceYield = 0
        guard let pipe = process?.stdout else { return }
        pipe.stopReading()
        loop.afterNextPoll { [weak self] in
            guard let self, !self.stdoutClosed else { return }
            self.process?.stdout?.resumeReading()
        }
    }

    /// Over its stderr budget, the plugin is not read until the second ends: its own full pipe holds it back.
    /// Reading and discarding as fast as it writes would cost the host a core for as long as the flood lasts (seen:
    /// 240 MB read in 20 s, the loop too starved to finish a shutdown beside it).
    func pauseStderr(forMs wait: UInt64) {
        guard !stderrClosed, let pipe = process?.stderr else { return }
        pipe.stopReading()
        if stderrPauseTimer == nil { stderrPauseTimer = try? UVTimer(loop: loop) }
        guard let timer = stderrPauseTimer else {
            pipe.resumeReading()
            return
        }
        try? timer.start(after: wait) { [weak self] in self?.resumeStderr() }
    }

    /// Reads stderr again (the window has ended, or the process has exited and what is left must reach EOF).
    func resumeStderr() {
        stderrPauseTimer?.stop()
        guard !stderrClosed else { return }
        process?.stderr?.resumeReading()
    }

    func handle(_ event: MessageReader.Event) {
        switch event {
        case .violation(let violation):
            let named = violation.error.naming(plugin: name)
            if let id = violation.requestID { respond(to: id, error: named) }
            report(named)
        case .message(let message, let lineNumber):
            messagesReceived += 1
            heardInRead = true
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
                report(ResponseError(.invalidRequest, "line \(lineNumber): error response without an id: \(error.message)", data: ["line": .int(Int64(lineNumber))]).naming(plugin: name))
            case .request(let id, let method, let params):
                guard withinRate(message, lineNumber: lineNumber) else { return }
                if method == PingRequest.method {
                    respond(to: id, result: .object(JSONObject()))
                } else if state != .ready {
                    respond(
                        to: id,
                        error: ResponseError(.notInitialized, "'\(method)' before the handshake completed", data: ["method": .string(method)]))
                } else if case let verdict = admission.beginRequest(id), verdict != .accepted {
                    let error = verdict == .duplicateID
                        ? ResponseError(.invalidRequest, "line \(lineNumber): request id \(id) is already in use", data: ["line": .int(Int64(lineNumber)), "field": "id"])
                        : ResponseError(
                            .limitExceeded, "line \(lineNumber): more than \(plugin.limits.maxOutstandingRequests) requests outstanding",
                            data: ["line": .int(Int64(lineNumber)), "limit": "maxOutstandingRequests"])
                    let named = error.naming(plugin: name)
                    _ = write(.errorResponse(id: id, error: named))
                    report(named)
                } else {
                    onEvent(.request(id: id, method: method, params: params))
                }
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

    /// Records a line read from the plugin in the protocol trace.
    func traceRead(_ event: MessageReader.Event, _ line: ArraySlice<UInt8>?) {
        switch event {
        case .message: trace.message(line ?? [], plugin: name, direction: .in, logger: logger)
        case .violation(let violation): trace.invalidLine(line, error: violation.error.naming(plugin: name), plugin: name, logger: logger)
        }
    }

    /// An answer to no pending request of the endpoint: the heartbeat's, or a protocol error.
    func unmatchedAnswer(_ id: RequestID, lineNumber: Int) {
        if heartbeat.answered(id) { return }
        report(
            ResponseError(
                .invalidRequest, "line \(lineNumber): response to unknown request id \(id)",
                data: ["line": .int(Int64(lineNumber)), "field": "id"]
            ).naming(plugin: name))
    }

    /// Anything from the plugin proves it alive: the running clock is read once per read, not per message.
    func noteHeard() {
        guard heardInRead else { return }
        heardInRead = false
        heartbeat.heard(now: loop.activeNow)
    }

    /// A protocol error: logged, reported, and counted; more than `maxProtocolErrors` within 10 s quarantines the
    /// plugin (killed; its supervisor's policy decides whether it comes back).
    func report(_ error: ResponseError, log: Bool = true) {
        guard killReason == nil else { return }
        if log { logger.warning("\(error.message)") }
        onEvent(.violation(error))
        guard state == .ready || state == .starting else { return }
        // The window is running time: a backlog read after the host's own stall must not look like a burst.
        let now = loop.activeNow
        if admission.recordError(now: now) {
            kill(reason: "quarantined: \(admission.errorsInWindow) protocol errors within \(admission.errorWindowMs / 1_000) s (last: \(error.message))")
        }
    }

    /// Takes a token for one message; a message over the rate is a protocol error (a request is answered with
    /// `-32004`), logged for the first and every 10,000th, not for each.
    /// Answers to pending requests never come here (see ``handle(_:)``); unsolicited ones (unknown ids) count.
    func withinRate(_ message: Message, lineNumber: Int) -> Bool {
        // The rate is refilled by real time, not running time: the plugin really had that time to send in.
        if admission.takeToken(now: loop.now) { return true }
        let error = ResponseError(
            .limitExceeded, "line \(lineNumber): more than \(plugin.limits.maxMessagesPerSecond) messages per second",
            data: ["line": .int(Int64(lineNumber)), "limit": "maxMessagesPerSecond"]
        ).naming(plugin: name)
        if case .request(let id, _, _) = message { _ = write(.errorResponse(id: id, error: error)) }
        droppedOverRate += 1
        report(error, log: droppedOverRate % 10_000 == 1)
        return false
    }

    func log(_ params: JSONValue?) {
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
