import Glibc
import Logging
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// The control interface: JSON-RPC lines over a Unix socket, for the CLI, tests and UI shells.
///
/// Security: the socket is created with mode 0600 (permissions set between `bind` and `listen`, so no client can
/// connect before they apply), and every connection's peer uid is checked with `SO_PEERCRED`; a client running as
/// another user gets `-32007 unauthorized` and is disconnected. Robustness: a client that sends garbage gets typed
/// errors and stays connected; one that disconnects mid-line is simply gone; one that does not read its
/// notifications is disconnected once its queue passes 8 MiB instead of growing host memory.
///
/// - Important: Loop thread only.
final class ControlServer {
    private let loop: UVLoop
    private let navigator: Navigator
    private let trace: ProtocolTrace
    private let path: String
    private let logger: Logger
    private var server: UVUnixListener?
    private var sessions: [Int: ControlSession] = [:]
    private var nextSession = 0
    private var observer: Int?
    static let maxQueuedBytes = 8 << 20
    static let trimAfterBytes = 512 << 10

    /// A request from a client: the host serves it as one task on the loop (``Host/serveControl(_:id:method:params:)``).
    var onRequest: (ControlSession, RequestID, String, JSONValue?) -> Void = { _, _, _, _ in }

    init(loop: UVLoop, path: String, navigator: Navigator, trace: ProtocolTrace, logger: Logger) {
        self.loop = loop
        self.path = path
        self.navigator = navigator
        self.trace = trace
        self.logger = logger
    }

    /// Binds and listens. Throws a typed error naming the path when the socket cannot be created, including when
    /// another host is already listening there, and when the folder or a file already at the path cannot be trusted
    /// (another user's folder, a folder others may write in, a symlink, another user's socket): then nothing listens.
    func start() throws(ResponseError) {
        let directory = FileSystem.parentDirectory(of: path)
        do {
            try FileSystem.prepareSocketDirectory(directory)
            if try FileSystem.inspectSocketPath(path) == .ownSocket {
                if let listener = UnixSocket.listener(at: path) {
                    let who = listener.pid > 0 ? "another host (pid \(listener.pid))" : "another host"
                    throw ResponseError(
                        .internalError, "\(who) is already listening on \(path)",
                        data: ["path": .string(path), "listenerPid": .int(Int64(listener.pid))])
                }
                FileSystem.remove(path)  // stale: left by a host of this user that was killed
            }
        } catch let error as SocketPathError {
            throw ResponseError(
                .internalError, "refusing to listen on \(path): \(error)",
                data: ["path": .string(path), "unsafe": .string(error.path)])
        } catch let error as ResponseError {
            throw error
        } catch {
            throw ResponseError(.internalError, "cannot listen on \(path): \(error)", data: ["path": .string(path)])
        }
        do {
            let server = try UVUnixListener(loop: loop, path: path, mode: 0o600)
            server.onPause = { [weak self] error, retryMs in self?.paused(error, retryMs: retryMs) }
            try server.start { [weak self] connection in self?.accept(connection) }
            self.server = server
        } catch {
            throw ResponseError(.internalError, "cannot listen on \(path): \(error)", data: ["path": .string(path)])
        }
        observer = navigator.observe { [weak self] event in self?.broadcast(event) }
        logger.info("control socket: \(path)")
    }

    private var pauses = 0

    /// Out of descriptors (or memory): clients wait in the backlog until accepting resumes. Logged at the first pause
    /// and then every 100th, so a long exhaustion does not flood the log.
    private func paused(_ error: UVError, retryMs: UInt64) {
        pauses += 1
        if pauses == 1 || pauses % 100 == 0 {
            logger.warning(
                "control: cannot accept clients (\(error.name): \(error)); retrying in \(retryMs) ms (\(pauses) pauses)"
            )
        }
    }

    func stop() {
        onRequest = { _, _, _, _ in }
        if let observer { navigator.stopObserving(observer) }
        observer = nil
        for session in sessions.values { session.close() }
        sessions.removeAll()
        trace.setSubscribers(nil)
        server?.close()
        server = nil
        FileSystem.remove(path)
    }

    private func accept(_ connection: UVPipe) {
        nextSession += 1
        let id = nextSession
        let session = ControlSession(id: id, pipe: connection, server: self, logger: logger)
        do {
            let peer = try connection.peerCredentials()
            guard peer.uid == SystemProcess.userID else {
                logger.warning(
                    "control: refused a client running as uid \(peer.uid) (pid \(peer.pid)); the host runs as uid \(SystemProcess.userID)"
                )
                session.send(
                    .errorResponse(
                        id: nil,
                        error: ResponseError(
                            .unauthorized, "this host accepts clients of uid \(SystemProcess.userID) only",
                            data: ["uid": .int(Int64(peer.uid))])))
                session.closeAfterFlush()
                return
            }
        } catch {
            connection.close()
            return
        }
        sessions[id] = session
        session.start()
    }

    func ended(_ session: ControlSession) {
        sessions[session.id] = nil
        if session.trace != nil { traceSubscriptionsChanged() }
    }

    // MARK: - Trace

    /// The host's trace stays off (free) while no client subscribes to it.
    func traceSubscriptionsChanged() {
        let any = sessions.values.contains { $0.trace != nil }
        trace.setSubscribers(any ? { [weak self] plugin, record in self?.broadcastTrace(plugin, record) } : nil)
    }

    private func broadcastTrace(_ plugin: String, _ record: [UInt8]) {
        var line: [UInt8]?
        for session in sessions.values {
            guard let subscription = session.trace, subscription.includes(plugin) else { continue }
            if line == nil {
                line = Message.notificationLine(method: TraceEventNotification.method, encodedParams: record)
            }
            if let line { session.writeTrace(line) }
        }
    }

    // MARK: - Events

    private func broadcast(_ event: HostEvent) {
        let subscribers = sessions.values.filter(\.subscribed)
        if case .treeChanged = event, !subscribers.contains(where: \.wantsDeltas) { navigator.snapshotEncoder.retire() }
        guard !subscribers.isEmpty else { return }
        // Encode each notification once, whatever the number of subscribers.
        switch event {
        case .treeChanged(let change):
            broadcast(change, to: subscribers)
        case .pluginChanged(let status):
            guard let line = Self.line(PluginChangedNotification.self, status.wire) else { return }
            for session in subscribers { session.write(line) }
        case .destroyed(let plugin, let instance, let type):
            guard
                let line = Self.line(
                    CoordinatorDestroyedNotification.self, .init(plugin: plugin, instance: instance, type: type))
            else { return }
            for session in subscribers { session.write(line) }
        case .deepLinkChanged(let params):
            guard let line = Self.line(DeepLinkChangedNotification.self, params) else { return }
            for session in subscribers { session.write(line) }
        }
    }

    /// Each notification is encoded once: the patch for the watchers with deltas that hold its base, the whole
    /// snapshot for the others that want it, the revision alone for the rest.
    private func broadcast(_ change: TreeChange, to subscribers: [ControlSession]) {
        let encoder = navigator.snapshotEncoder
        var delta: SnapshotEncoder.Delta?
        if subscribers.contains(where: \.wantsDeltas) {
            do {
                delta = try encoder.publish(
                    change.tree, epoch: change.epoch, touched: change.touched, availability: change.availability)
            } catch {
                logger.error("control: cannot encode the change to revision \(change.revision): \(error)")
            }
        }
        let deltaLine = delta.map {
            Message.notificationLine(method: TreeChangedNotification.method, encodedParams: $0.params)
        }
        var full: [UInt8]?
        var brief: [UInt8]?
        func fullLine() -> [UInt8]? {
            if full == nil,
                let snapshot = try? encoder.snapshot(
                    of: change.tree, epoch: change.epoch, availability: change.availability)
            {
                full = Self.treeChangedLine(revision: change.revision, snapshot: snapshot)
            }
            return full
        }
        for session in subscribers {
            if session.wantsDeltas {
                if session.heldGeneration == encoder.generation { continue }  // nothing it holds changed
                if session.isBehind {
                    session.heldGeneration = nil  // caught up with a snapshot once its queue drains
                } else if let delta, let deltaLine, session.heldGeneration == delta.baseGeneration {
                    session.write(deltaLine)
                    session.heldGeneration = delta.generation
                } else if let line = fullLine() {
                    // No patch from what it holds (none was made, or the encoder lost its base): the tree whole.
                    session.write(line)
                    session.heldGeneration = encoder.generation
                } else {
                    session.heldGeneration = nil  // a full snapshot once its queue drains, or with the next change
                }
            } else if session.wantsSnapshots {
                if let line = fullLine() { session.write(line) }
            } else {
                if brief == nil {
                    brief = Self.line(TreeChangedNotification.self, .init(revision: change.revision, snapshot: nil))
                }
                if let brief { session.write(brief) }
            }
        }
        if (full?.count ?? 0) > Self.trimAfterBytes { SystemProcess.returnFreeMemory() }
    }

    /// A watcher with deltas that fell behind has drained its queue: it gets the published snapshot whole.
    func catchUp(_ session: ControlSession) {
        let encoder = navigator.snapshotEncoder
        guard let snapshot = try? encoder.publishedSnapshot() else { return }
        session.write(Self.treeChangedLine(revision: snapshot.revision, snapshot: snapshot.bytes))
        session.heldGeneration = encoder.generation
    }

    /// `tree/changed` `{revision, snapshot}` from the snapshot's encoded bytes.
    static func treeChangedLine(revision: UInt64, snapshot: [UInt8]) -> [UInt8] {
        var params = JSONWriter(capacity: snapshot.count + 40)
        params.writeRaw("{\"revision\":")
        params.writeInteger(Int64(bitPattern: revision))
        params.writeRaw(",\"snapshot\":")
        params.writeRawBytes(snapshot)
        params.append(UInt8(ascii: "}"))
        return Message.notificationLine(method: TreeChangedNotification.method, encodedParams: params.bytes)
    }

    static func line<N: ControlNotification>(_ type: N.Type, _ params: N.Params) -> [UInt8]? {
        guard let encoded = try? JSONValueEncoder().encodeBytes(params) else { return nil }
        return Message.notificationLine(method: N.method, encodedParams: encoded)
    }
}

/// One connected control client.
final class ControlSession: ControlSubscriber {
    let id: Int
    private let pipe: UVPipe
    private unowned let server: ControlServer
    private let logger: Logger
    private var reader = MessageReader(maxLineLength: 1 << 20)
    var subscribed = false
    var wantsSnapshots = true
    var wantsDeltas = false
    var heldGeneration: Int?
    var trace: TraceSubscription? {
        didSet { if (oldValue == nil) != (trace == nil) { server.traceSubscriptionsChanged() } }
    }
    /// Trace events this client missed because it fell behind (see ``writeTrace(_:)``).
    private var traceDropped = 0
    private var closed = false

    init(id: Int, pipe: UVPipe, server: ControlServer, logger: Logger) {
        self.id = id
        self.pipe = pipe
        self.server = server
        self.logger = logger
    }

    /// A watcher with deltas whose unread notifications pass this many bytes misses the next ones and gets a full
    /// snapshot once it has read what is queued (spec §15).
    static let deltaBacklogBytes = 1 << 20

    var isBehind: Bool { pipe.queuedBytes > Self.deltaBacklogBytes }

    func start() {
        pipe.onDrain = { [weak self] in
            guard let self, self.subscribed, self.wantsDeltas, self.heldGeneration == nil else { return }
            self.server.catchUp(self)
        }
        do {
            try pipe.startReading { [weak self] event in self?.read(event) }
        } catch {
            close()
        }
    }

    private func read(_ event: UVPipe.ReadEvent) {
        switch event {
        case .data(let bytes):
            reader.append(bytes)
            while !closed, let next = reader.next() { handle(next) }
        case .eof, .error:
            // A client that disconnects mid-line leaves an unterminated fragment: nothing to answer.
            close()
        }
    }

    private func handle(_ event: MessageReader.Event) {
        switch event {
        case .violation(let violation):
            send(.errorResponse(id: violation.requestID, error: violation.error))
        case .message(.request(let id, let method, let params), _):
            server.onRequest(self, id, method, params)
        case .message(.notification, _), .message(.response, _), .message(.errorResponse, _):
            break  // clients have nothing to notify the host of; stray responses are ignored
        }
    }

    func send(_ message: Message) { write(message.encodedLine()) }

    func write(_ line: [UInt8]) {
        guard !closed else { return }
        if pipe.queuedBytes + line.count > ControlServer.maxQueuedBytes {
            logger.warning("control: disconnecting a client that does not read (\(pipe.queuedBytes) bytes queued)")
            close()
            return
        }
        do { try pipe.write(line) } catch { close() }
    }

    /// A trace event. A client that falls behind misses trace events instead of being disconnected (a busy host's
    /// trace can outpace any reader, and the tree notifications must still get through): past half the queue limit
    /// events are dropped, and a `{time, dropped}` event marks the gap once the client has caught up.
    func writeTrace(_ line: [UInt8]) {
        guard !closed else { return }
        if pipe.queuedBytes + line.count > ControlServer.maxQueuedBytes / 2 {
            traceDropped += 1
            return
        }
        if traceDropped > 0 {
            let gap = TraceRecord.encodeDropped(milliseconds: WallClock.milliseconds, count: traceDropped)
            write(Message.notificationLine(method: TraceEventNotification.method, encodedParams: gap))
            traceDropped = 0
        }
        write(line)
    }

    func closeAfterFlush() {
        closed = true
        try? pipe.shutdown { [pipe] _ in pipe.close() }
    }

    func close() {
        guard !closed else { return }
        closed = true
        pipe.close()
        server.ended(self)
    }
}
