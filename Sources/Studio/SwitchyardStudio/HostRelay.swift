import Dispatch
import HummingbirdWebSocket
import Logging
import NIOWebSocket
import SwitchyardClient
import SwitchyardProtocol
import Synchronization

/// One browser tab's connection: a control client of the host of its own, relayed line for line. The page speaks
/// the control protocol (Protocol/README.md §15) itself; the relay passes the host's lines on as written (a
/// `trace/event` carries each plugin message byte for byte) and checks each of the page's requests against the
/// methods a page may use.
///
/// Back-pressure: the host's lines are read on a thread of the relay's own and wait for the browser; past
/// ``StudioConfiguration/maxPendingBytes`` the thread stops reading, so the host's bounded queue for this client
/// fills and the host drops it (trace events are dropped sooner, §15.1). A slow or vanished browser costs the host
/// that queue and nothing more; the relay then ends the tab's connection, and the page reconnects.
struct HostRelay {
    let configuration: StudioConfiguration
    let logger: Logger

    /// The control methods a page may call; the fault methods only with `--allow-faults`. (`host/shutdown` is not
    /// among them: closing a tab must never stop an app.)
    static let pageMethods: Set<String> = [
        PingRequest.method, NavigateRequest.method, OpenRequest.method, ValidateRequest.method, TreeGetRequest.method,
        TreeRenderRequest.method, TreeQueryRequest.method, TreeSubscribeRequest.method, TreeUnsubscribeRequest.method,
        UserDismissedRequest.method, UserActionRequest.method, HostStatusRequest.method, HostPluginsRequest.method,
        PluginStartRequest.method, TraceSubscribeRequest.method, TraceUnsubscribeRequest.method,
        DeepLinkCancelRequest.method, DeepLinkPendingRequest.method,
        TreeHistoryRequest.method, PluginUpgradeRequest.method,
    ]
    /// What a page may ask of `plugin/upgrade`: the entry's own command started again (a new build at the same
    /// path). A `command`, `product` or `args` would let a page run any program; they are for `switchyard upgrade`.
    static let pageUpgradeParams: Set<String> = ["plugin", "probationMs", "noRollback", "waitForProbation"]
    static let faultMethods: Set<String> = [PluginSignalRequest.method, PluginRestartRequest.method]

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let connection: ControlLineConnection
        do { connection = try ControlLineConnection(path: configuration.socketPath) } catch {
            try? await outbound.write(.text(hello(connected: false, error: error.description)))
            try? await outbound.close(.unexpectedServerError, reason: "no host")
            return
        }
        let (lines, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream(bufferingPolicy: .unbounded)
        let credit = Credit(limit: configuration.maxPendingBytes)
        let reader = LineReader(connection: connection, credit: credit, continuation: continuation)
        DispatchQueue(label: "switchyard.studio.relay").async { reader.run() }
        // The socket's writes block too: on a queue of their own (the reader's is busy reading), in order.
        let writes = DispatchQueue(label: "switchyard.studio.relay.writes")
        defer {
            connection.close()
            credit.cancel()
        }
        do { try await outbound.write(.text(hello(connected: true, error: nil))) } catch { return }

        await withTaskGroup(of: Void.self) { group in
            // Host → page: every line as one text message, in order.
            group.addTask {
                var close = (code: WebSocketErrorCode.goingAway, reason: "the host closed the connection")
                do {
                    for try await line in lines {
                        do { try await outbound.write(.text(String(decoding: line, as: UTF8.self))) } catch { break }
                        credit.release(line.count)
                    }
                } catch {
                    // A read error or a line over the limit: the close frame says which.
                    logger.notice("a page's relay stopped reading the host: \(error)")
                    close = (.unexpectedServerError, Self.closeReason("\(error)"))
                }
                // The host closed (or the tab is gone): say so with a close frame; the page shows "disconnected".
                try? await outbound.close(close.code, reason: close.reason)
            }
            // Page → host: requests, checked, then forwarded as sent.
            group.addTask {
                do {
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        if let refusal = refusal(of: text) {
                            credit.acquireWithoutWaiting(refusal.count)
                            continuation.yield(refusal)
                            continue
                        }
                        let bytes = Array(text.utf8)
                        let sent = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                            writes.async { done.resume(returning: (try? connection.send(bytes)) != nil) }
                        }
                        guard sent else { break }
                    }
                } catch {
                    logger.debug("a page's WebSocket ended: \(error)")
                }
                continuation.finish()
            }
            await group.next()
            connection.close()
            credit.cancel()
            continuation.finish()
            await group.next()
        }
    }

    /// `text` cut to what a WebSocket close frame holds (123 bytes of UTF-8), at a character boundary.
    static func closeReason(_ text: String) -> String {
        var reason = ""
        for character in text {
            guard reason.utf8.count + character.utf8.count <= 123 else { break }
            reason.append(character)
        }
        return reason
    }

    /// The relay's first message: whether the host could be reached, and whether fault buttons are on.
    private func hello(connected: Bool, error: String?) -> String {
        var params: JSONObject = [
            "connected": .bool(connected), "faults": .bool(configuration.allowFaults),
            "socket": .string(configuration.socketPath),
        ]
        if let error { params["error"] = .string(error) }
        return String(
            decoding: Message.notification(method: "studio/hello", params: .object(params)).encodedLine().dropLast(),
            as: UTF8.self)
    }

    /// An error answer for a page message the relay does not pass on; nil for one it does.
    private func refusal(of text: String) -> [UInt8]? {
        let message: Message
        switch (try? JSONParser.parse(text)).map(Message.decode) {
        case .success(let decoded)?: message = decoded
        default:
            return Message.errorResponse(
                id: nil, error: ResponseError(.invalidRequest, "the studio relays only JSON-RPC requests")
            ).encodedLine().dropLast()
        }
        guard case .request(let id, let method, let params) = message else {
            return Message.errorResponse(
                id: nil, error: ResponseError(.invalidRequest, "the studio relays only JSON-RPC requests")
            ).encodedLine().dropLast()
        }
        if method == PluginUpgradeRequest.method,
            let field = params?.objectValue?.keys.sorted().first(where: { !Self.pageUpgradeParams.contains($0) })
        {
            let error = ResponseError(
                .notAllowed,
                "the studio upgrades a plugin to its own entry's command (a new build at the same path); '\(field)' is for `switchyard upgrade`",
                data: ["method": .string(method), "field": .string(field)])
            return Array(Message.errorResponse(id: id, error: error).encodedLine().dropLast())
        }
        if Self.pageMethods.contains(method) || (configuration.allowFaults && Self.faultMethods.contains(method)) {
            return nil
        }
        let reason =
            Self.faultMethods.contains(method)
            ? "'\(method)' is off: start the studio (and the host) with --allow-faults"
            : "the studio does not relay '\(method)'"
        return Array(
            Message.errorResponse(id: id, error: ResponseError(.notAllowed, reason, data: ["method": .string(method)]))
                .encodedLine().dropLast())
    }
}

/// Reads the host's lines on a Dispatch thread (blocking reads never run on the Swift-concurrency pool) and hands
/// them to the writer, waiting for credit when the browser is behind.
private struct LineReader: Sendable {
    let connection: ControlLineConnection
    let credit: Credit
    let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation

    func run() {
        do {
            while credit.isOpen, let line = try connection.nextLine() {
                // Handed on first, then counted: only lines handed on are ever released, so a line that waited
                // before being handed on would wait for good when it alone is over the limit.
                continuation.yield(line)
                guard credit.acquire(line.count) else { break }
            }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
}

/// Bytes handed to the writer and not yet written, bounded: the reader waits while over the limit. (The writer may
/// release a line before the reader counts it: the total dips below zero for that moment, and nothing waits.)
private final class Credit: Sendable {
    private struct State {
        var pending = 0
        var cancelled = false
        var waiting = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    var isOpen: Bool { state.withLock { !$0.cancelled } }

    /// Counts `bytes` as pending, then blocks while more than the limit is; false once cancelled.
    func acquire(_ bytes: Int) -> Bool {
        let mustWait = state.withLock { state -> Bool in
            state.pending += bytes
            state.waiting = state.pending > limit && !state.cancelled
            return state.waiting
        }
        if mustWait { wake.wait() }
        return isOpen
    }

    /// Counts bytes the relay itself adds (its refusals), which never wait.
    func acquireWithoutWaiting(_ bytes: Int) { state.withLock { $0.pending += bytes } }

    /// `bytes` were written; wakes the reader once the backlog is down to half the limit.
    func release(_ bytes: Int) {
        let resume = state.withLock { state -> Bool in
            state.pending -= bytes
            guard state.waiting, state.pending <= limit / 2 else { return false }
            state.waiting = false
            return true
        }
        if resume { wake.signal() }
    }

    /// Ends the relay: a waiting reader wakes and stops.
    func cancel() {
        let resume = state.withLock { state -> Bool in
            state.cancelled = true
            defer { state.waiting = false }
            return state.waiting
        }
        if resume { wake.signal() }
    }
}
