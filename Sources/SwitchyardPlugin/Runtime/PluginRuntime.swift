import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import SwitchyardProtocol

/// The plugin side of the protocol on stdio: the handshake, `$/ping`, `shutdown`/`exit`, request dispatch, and
/// requests to the host.
///
/// Threading: handlers run on the main actor, and every answer of a batch leaves in one `write`. The thread that
/// reads stdin runs the batch's handlers itself, on the main queue taken synchronously (`StdioLoop`): no thread
/// wakes another on the way from a request to its answer, and batching is what makes pipelined throughput.
///
/// stdout belongs to the protocol: ``run(_:)`` moves it to a private descriptor and points fd 1 at stderr, so a stray
/// `print` from plugin code lands in the host log instead of corrupting the stream.
@MainActor
public final class PluginRuntime {
    /// What the plugin declares in `initialize`.
    public struct Configuration: Sendable {
        /// The plugin's name and version, reported in `initialize`.
        public var info: PluginInfo
        /// The route table: every coordinator type the plugin serves (``PluginCore`` fills it from the
        /// declarations; a hand-written plugin lists them itself).
        public var coordinators: [CoordinatorDeclaration]
        /// Protocol versions this plugin speaks; the highest one the host also offers is chosen.
        public var protocolVersions: [Int]

        /// What `initialize` answers; by default every protocol version this SDK speaks.
        public init(
            info: PluginInfo, coordinators: [CoordinatorDeclaration],
            protocolVersions: [Int] = ProtocolVersion.supported
        ) {
            self.info = info
            self.coordinators = coordinators
            self.protocolVersions = protocolVersions
        }
    }

    /// A synchronous request handler: returns the result or throws (a `ResponseError` goes to the host as is;
    /// anything else becomes an `internalError`).
    public typealias Handler = @MainActor (JSONValue?) throws -> JSONValue
    /// An asynchronous request handler, for answers that need the host first.
    public typealias AsyncHandler = @MainActor (JSONValue?) async throws -> JSONValue

    /// What the runtime declares in `initialize`.
    public private(set) var configuration: Configuration
    /// The manifest's name for this plugin, known after `initialize`.
    public private(set) var pluginName: String?
    /// The limits the host enforces, known after `initialize`.
    public private(set) var limits: PluginLimits?
    /// Whether the handshake completed (`initialized` arrived): the host sends coordinator requests only after it.
    public private(set) var isInitialized = false
    private var shutdownRequested = false
    /// Declarations that would fail at run time (``DeclarationCheck``): the answer to `initialize`, the one line a user sees.
    var declarationProblems: [String] = []

    /// Request ids, the requests awaiting the host's answer, and incoming dispatch by method.
    private let endpoint = RPCEndpoint()
    /// Who answers `coordinator/route` on the fast lane (the attached ``PluginCore``); any handler registered for
    /// the method afterwards takes it back, so a hand-written route handler always runs.
    var routeLane: (any RouteLane)?
    /// Whether lines in the host's shape take the fast lane; off, every line goes the general way. SPI, for the
    /// tests that check both answer every line alike.
    @_spi(Testing) public var fastLaneEnabled = true
    var output = Output()
    /// Called once the handshake has completed (`initialized` received).
    public var onInitialized: (@MainActor () -> Void)?

    /// A runtime that declares `configuration` and answers the protocol's own methods; register handlers, then
    /// ``run(_:)`` it (or drive it in-process with `PluginTestConnection`).
    public init(configuration: Configuration) {
        self.configuration = configuration
        endpoint.send = { [weak self] line in self?.write(line) }
        registerLifecycle()
    }

    /// The protocol's own methods: the handshake, `$/ping`, `shutdown` and `exit`. Registered first and never
    /// replaced by plugin code (see ``isBuiltIn(_:)``).
    private func registerLifecycle() {
        endpoint.onRequest(PingRequest.method) { _, responder in responder.reply(.success(.object(JSONObject()))) }
        endpoint.onRequest(InitializeRequest.method) { [weak self] params, responder in
            guard let self else { return }
            responder.reply(Result { () throws(ResponseError) in try initialize(params) })
        }
        endpoint.onRequest(ShutdownRequest.method) { [weak self] _, responder in
            self?.shutdownRequested = true
            responder.reply(.success(.object(JSONObject())))
        }
        endpoint.onNotification(InitializedNotification.method) { [weak self] _ in
            guard let self else { return }
            isInitialized = true
            onInitialized?()
        }
        endpoint.onNotification(ExitNotification.method) { [weak self] _ in
            guard let self else { return }
            flush()
            exit(shutdownRequested ? 0 : 1)
        }
    }

    /// Whether `method` is one of the protocol's own, which plugin handlers cannot take over.
    private static func isBuiltIn(_ method: String) -> Bool {
        [
            PingRequest.method, InitializeRequest.method, ShutdownRequest.method, InitializedNotification.method,
            ExitNotification.method,
        ].contains(method)
    }

    /// Replaces the declared coordinators (before `initialize`).
    public func setCoordinators(_ coordinators: [CoordinatorDeclaration]) {
        configuration.coordinators = coordinators
    }

    // MARK: - Registration

    /// Handles `method` synchronously.
    public func onRequest(_ method: String, _ handler: @escaping Handler) {
        guard !Self.isBuiltIn(method) else { return }
        releaseLane(method)
        endpoint.onRequest(method) { params, responder in
            do { responder.reply(.success(try handler(params))) } catch {
                responder.reply(.failure(Self.answer(for: error)))
            }
        }
    }

    /// Handles `method` with an async handler (runs in a main-actor task).
    public func onRequestAsync(_ method: String, _ handler: @escaping AsyncHandler) {
        guard !Self.isBuiltIn(method) else { return }
        releaseLane(method)
        endpoint.onRequest(method) { params, responder in
            Task { @MainActor in
                do { responder.reply(.success(try await handler(params))) } catch {
                    responder.reply(.failure(Self.answer(for: error)))
                }
            }
        }
    }

    /// Handles a typed host-to-plugin request synchronously.
    public func onRequest<R: HostToPluginRequest>(
        _ type: R.Type, _ handler: @escaping @MainActor (R.Params) throws -> R.Result
    ) {
        guard !Self.isBuiltIn(R.method) else { return }
        releaseLane(R.method)
        // Params that do not decode are answered `invalidParams` by the endpoint, naming the field.
        endpoint.onRequest(R.self) { params, responder in
            responder.reply(encoding: Result { try handler(params) }.mapError { Self.answer(for: $0) })
        }
    }

    /// Handles `method` with a handler whose result is already JSON bytes (the SDK's Codable-free answers, see
    /// `RouteFastPath`); errors are answered as the other handlers' are.
    func onRequestEncoded(_ method: String, _ handler: @escaping @MainActor (JSONValue?) throws -> [UInt8]) {
        guard !Self.isBuiltIn(method) else { return }
        releaseLane(method)
        endpoint.onRequest(method) { params, responder in
            do { responder.replyEncoded(try handler(params)) } catch {
                responder.reply(.failure(Self.answer(for: error)))
            }
        }
    }

    /// A handler registered for `coordinator/route` replaces the fast lane's.
    private func releaseLane(_ method: String) {
        if method == CoordinatorRouteRequest.method { routeLane = nil }
    }

    /// A handler's error as its answer: a ``ResponseError`` as it is; anything else is an `internalError` whose
    /// `data` carries the error's type and full description (Protocol/README.md §7), since the message alone
    /// (`"\(error)"`) often drops what the author needs to find the bug.
    static func answer(for error: any Error) -> ResponseError {
        if let error = error as? ResponseError { return error }
        return ResponseError(
            .internalError, "\(error)",
            data: [
                "type": .string("\(type(of: error))"),
                "description": .string(String(reflecting: error)),
            ])
    }

    /// Handles a typed host-to-plugin notification.
    public func onNotification<N: HostToPluginNotification>(
        _ type: N.Type, _ handler: @escaping @MainActor (N.Params) -> Void
    ) {
        guard !Self.isBuiltIn(N.method) else { return }
        endpoint.onNotification(N.self, handler)
    }

    // MARK: - Talking to the host

    /// Sends a typed request to the host and waits for its answer.
    public func request<R: PluginToHostRequest>(
        _ type: R.Type, _ params: R.Params
    ) async throws(ResponseError)
        -> R.Result
    {
        let value: JSONValue
        do { value = try Coding.encode(params) } catch {
            throw ResponseError(.internalError, "cannot encode \(R.method) params: \(error)")
        }
        let answer: Result<JSONValue, ResponseError> = await withCheckedContinuation { continuation in
            endpoint.request(R.method, params: value) { continuation.resume(returning: $0) }
        }
        switch RPCEndpoint.decode(R.self, answer) {
        case .success(let result): return result
        case .failure(.response(let error)): throw error
        case .failure(.undecodable(_, let reason)), .failure(.unencodable(_, let reason)):
            throw ResponseError(.invalidAnswer, "the host answered \(R.method) with an unexpected result: \(reason)")
        }
    }

    /// Sends an untyped request to the host.
    public func requestRaw(_ method: String, params: JSONValue?) async throws(ResponseError) -> JSONValue {
        let answer: Result<JSONValue, ResponseError> = await withCheckedContinuation { continuation in
            endpoint.request(method, params: params) { continuation.resume(returning: $0) }
        }
        return try answer.get()
    }

    /// Sends a typed notification to the host.
    public func notify<N: PluginToHostNotification>(_ type: N.Type, _ params: N.Params) {
        endpoint.notify(N.self, params)
    }

    /// Logs through the host with a level (plain stderr works too).
    public func log(_ level: LogNotification.Level, _ message: String) {
        notify(LogNotification.self, LogNotification.Params(level: level, message: message))
    }

    func send(_ message: Message) { write(message.encodedLine()) }

    private func write(_ line: [UInt8]) {
        if let inProcessPeer {
            inProcessPeer(line)
            return
        }
        output.append(line)
        scheduleFlush()
    }

    /// Where lines go instead of stdout when an in-process peer drives this runtime (see ``connectInProcess(_:)``).
    private(set) var inProcessPeer: (@MainActor ([UInt8]) -> Void)?

    /// Hands every line this runtime writes to `peer`, at once and in order, instead of buffering it for stdout:
    /// the `SwitchyardPluginTesting` product plays the host this way, feeding lines back with ``handleLine(_:)``.
    /// SPI, not public API: a plugin's `main` never needs it.
    @_spi(Testing)
    public func connectInProcess(_ peer: @escaping @MainActor ([UInt8]) -> Void) {
        inProcessPeer = peer
    }

    /// Handles one line as if it came from stdin: what an in-process peer (``connectInProcess(_:)``) calls. SPI, so
    /// it is not part of the API a plugin author sees.
    @_spi(Testing)
    public func handleLine(_ line: String) {
        let bytes = Array(line.utf8)
        serve(bytes, start: 0, end: bytes.count, lineNumber: 0)
    }

    /// Handles one line as the reader framed and parsed it.
    func handle(_ event: MessageReader.Event) {
        switch event {
        case .violation(let violation):
            if let id = violation.requestID {
                send(.errorResponse(id: id, error: violation.error))
            } else {
                StdioGuard.writeError("switchyard: ignoring a line from the host: \(violation.error.message)\n")
            }
        case .message(let message, _):
            handle(message)
        }
    }

    private func handle(_ message: Message) {
        // The heartbeat is the most frequent request and needs no handler: answered here, without the endpoint's
        // dispatch (a responder per request), which the hop benchmark measures.
        if case .request(let id, PingRequest.method, _) = message {
            send(.response(id: id, result: .object(JSONObject())))
            return
        }
        // Answers complete the requests this plugin sent; requests and notifications go to their handlers (an
        // unknown request is answered `methodNotFound`). An error without an id concerns no request: ignored.
        endpoint.receive(message)
    }

    private func initialize(_ params: JSONValue?) throws(ResponseError) -> JSONValue {
        let request: InitializeRequest.Params
        do { request = try Coding.decode(InitializeRequest.Params.self, from: params) } catch {
            throw ResponseError.invalidParams(method: InitializeRequest.method, error)
        }
        guard let version = configuration.protocolVersions.filter(request.protocolVersions.contains).max() else {
            throw ResponseError(
                .unsupportedProtocolVersion,
                "this plugin speaks protocol versions \(configuration.protocolVersions), the host offers \(request.protocolVersions)",
                data: ["supported": .array(configuration.protocolVersions.map { .int(Int64($0)) })])
        }
        guard declarationProblems.isEmpty else {
            throw ResponseError(
                .compositionError, declarationProblems.joined(separator: "; "),
                data: ["problems": .array(declarationProblems.map { .string($0) })])
        }
        pluginName = request.pluginName
        limits = request.limits
        let result = InitializeRequest.Result(
            protocolVersion: version, plugin: configuration.info, coordinators: configuration.coordinators)
        do { return try Coding.encode(result) } catch {
            throw ResponseError(.internalError, "cannot encode the route table: \(error)")
        }
    }

    func stdinClosed() -> Never {
        // The plugin contract: exit when stdin reaches EOF (the host closed it, or died).
        endpoint.close(ResponseError(.shuttingDown, "the host closed the connection"))
        flush()
        exit(0)
    }

    // MARK: - Output

    private var flushScheduled = false
    /// Set while ``StdioLoop`` runs a batch: it flushes at the end of the batch itself, so no block is queued per
    /// answer (output from elsewhere, an async handler say, still schedules its own flush).
    var inBatch = false

    private func scheduleFlush() {
        guard !flushScheduled, !inBatch else { return }
        flushScheduled = true
        DispatchQueue.main.async { self.flush() }
    }

    func flush() {
        flushScheduled = false
        output.flush()
    }
}
