@_spi(Testing) public import SwitchyardPlugin
public import SwitchyardProtocol

/// The host's side of a plugin connection, in-process: a plugin's own tests drive it over the real protocol (every
/// message is encoded and parsed as on the pipe) without spawning a host or a process.
///
/// Why a separate product: the SDK's stdio runtime used to expose its test hooks as public API; they are now SPI,
/// and this connection is the one supported way to use them, so a plugin's `main` sees only what it needs.
///
/// It plays what the host does: the handshake (`initialize`, then `initialized`), typed `coordinator/*` requests and
/// notifications, and answers to the plugin's own requests (`navigate`, `tree/query`) through handlers the test
/// registers. Everything the plugin sends is kept in ``received``, in order.
///
/// ```swift
/// import SwitchyardPlugin
/// import SwitchyardPluginTesting
/// import Testing
///
/// @MainActor @Test func showsAnItem() async throws {
///     let connection = PluginTestConnection(Plugin("shop", coordinators: [ShopCoordinator.self]))
///     try await connection.initialize()
///     _ = try await connection.create(.init(instance: InstanceID(1), type: "shop", reason: .new))
///     let item = try await connection.route(
///         .init(instance: InstanceID(1), type: "shop", route: "item", transition: .push, params: ["id": "7"]))
///     #expect(item.content == .screen(ScreenDescriptor(name: "Item", props: ["id": "7"])))
///     connection.onRequest(NavigateRequest.self) { _ in .init(revision: 2, instance: InstanceID(1)) }
/// }
/// ```
///
/// Never sends `exit`: the runtime would end the process, here the test runner's.
@MainActor
public final class PluginTestConnection {
    /// The runtime under test, reached only through protocol lines.
    public let runtime: PluginRuntime
    /// The plugin's core, when the connection built it from a ``Plugin``: for assertions on coordinator objects
    /// (`core?.object(InstanceID(1)) as? ShopCoordinator`) that the protocol cannot show.
    public let core: PluginCore?
    /// Every message the plugin sent, in order: answers, its own requests, notifications (logs).
    public private(set) var received: [Message] = []
    /// The plugin's answer to `initialize`, once ``initialize(pluginName:protocolVersions:limits:restarts:)`` ran.
    public private(set) var initializeResult: InitializeRequest.Result?

    /// The host's endpoint: ids and pending requests of this side, and the handlers for the plugin's requests.
    private let endpoint = RPCEndpoint()

    /// Serves `plugin`'s coordinator types, as `Plugin.run()` would on stdio.
    ///
    /// ```swift
    /// let connection = PluginTestConnection(Plugin("todos", coordinators: [TodosCoordinator.self]))
    /// ```
    public convenience init(_ plugin: Plugin) {
        let server = plugin.makeServer()
        self.init(runtime: server.runtime, core: server.core)
    }

    /// Drives a runtime built by hand (a plugin that registers its own handlers on ``PluginRuntime``).
    ///
    /// ```swift
    /// let runtime = PluginRuntime(configuration: .init(info: PluginInfo(name: "hello", version: "1.0.0"), coordinators: []))
    /// let connection = PluginTestConnection(runtime: runtime)
    /// ```
    public init(runtime: PluginRuntime, core: PluginCore? = nil) {
        self.runtime = runtime
        self.core = core
        // Lines cross in both directions at once and in order, so a synchronous handler's answer is there as soon
        // as the request returns. Unowned: the connection owns the runtime, which must not keep it alive.
        endpoint.send = { [unowned runtime] line in
            runtime.handleLine(String(decoding: line.last == 0x0A ? line.dropLast() : line[...], as: UTF8.self))
        }
        runtime.connectInProcess { [weak self] line in self?.receive(line) }
    }

    private func receive(_ line: [UInt8]) {
        let bytes = line.last == 0x0A ? line.dropLast() : line[...]
        guard case .message(let message, _) = MessageReader.decodeLine(bytes, lineNumber: received.count + 1) else {
            // The SDK only writes what it encoded itself; record the failure where a test sees it.
            received.append(
                .notification(method: "$/invalidLine", params: .string(String(decoding: bytes, as: UTF8.self))))
            return
        }
        received.append(message)
        endpoint.receive(message)
    }

    // MARK: - Handshake

    /// The configured route table, from the plugin's `initialize` answer (empty before the handshake).
    public var coordinators: [CoordinatorDeclaration] { initializeResult?.coordinators ?? [] }

    /// Performs the handshake, as the host does after spawning: `initialize`, then the `initialized` notification.
    ///
    /// ```swift
    /// let result = try await connection.initialize(pluginName: "shop")
    /// #expect(result.coordinators.map(\.type) == ["shop"])
    /// ```
    @discardableResult
    public func initialize(
        pluginName: String? = nil, protocolVersions: [Int] = ProtocolVersion.supported,
        limits: PluginLimits = .defaults, restarts: Int? = nil
    ) async throws(ResponseError) -> InitializeRequest.Result {
        let params = InitializeRequest.Params(
            protocolVersions: protocolVersions, host: PluginInfo(name: "switchyard-test", version: "0"),
            pluginName: pluginName ?? runtime.configuration.info.name, limits: limits, restarts: restarts)
        let result = try await request(InitializeRequest.self, params)
        initializeResult = result
        notify(InitializedNotification.self, Empty())
        return result
    }

    /// Runs the handshake unless it already ran: the host never sends coordinator requests before it.
    private func handshake() async throws(ResponseError) {
        if initializeResult == nil { try await initialize() }
    }

    // MARK: - Host to plugin

    /// Sends any host-to-plugin request and waits for the plugin's answer (a plugin error is thrown as is).
    ///
    /// ```swift
    /// _ = try await connection.request(PingRequest.self, .init())
    /// ```
    public func request<R: HostToPluginRequest>(
        _ type: R.Type, _ params: R.Params
    ) async throws(ResponseError) -> R.Result {
        let answer: Result<R.Result, RPCFailure> = await withCheckedContinuation { continuation in
            endpoint.request(R.self, params) { continuation.resume(returning: $0) }
        }
        switch answer {
        case .success(let result): return result
        case .failure(.response(let error)): throw error
        case .failure(.unencodable(_, let reason)):
            throw ResponseError(.internalError, "cannot encode \(R.method) params: \(reason)")
        case .failure(.undecodable(_, let reason)):
            throw ResponseError(.invalidAnswer, "the plugin answered \(R.method) with an unexpected result: \(reason)")
        }
    }

    /// Sends any host-to-plugin notification (handled before this returns, when its handler is synchronous).
    ///
    /// ```swift
    /// connection.notify(CoordinatorTabSelectedNotification.self, .init(instance: InstanceID(1), tab: "shop", isRepeat: false))
    /// ```
    public func notify<N: HostToPluginNotification>(_ type: N.Type, _ params: N.Params) {
        endpoint.notify(N.self, params)
    }

    /// `coordinator/create` (after the handshake, which it runs if needed).
    ///
    /// ```swift
    /// let created = try await connection.create(.init(instance: InstanceID(1), type: "shop", reason: .new))
    /// ```
    public func create(
        _ params: CoordinatorCreateRequest.Params
    ) async throws(ResponseError) -> CoordinatorCreateRequest.Result {
        try await handshake()
        return try await request(CoordinatorCreateRequest.self, params)
    }

    /// `coordinator/route` (after the handshake, which it runs if needed).
    ///
    /// ```swift
    /// let item = try await connection.route(.init(instance: InstanceID(1), type: "shop", route: "item", transition: .push, params: ["id": "7"]))
    /// ```
    public func route(
        _ params: CoordinatorRouteRequest.Params
    ) async throws(ResponseError) -> CoordinatorRouteRequest.Result {
        try await handshake()
        return try await request(CoordinatorRouteRequest.self, params)
    }

    /// `coordinator/deepLink` (after the handshake, which it runs if needed).
    ///
    /// ```swift
    /// let decision = try await connection.deepLink(.init(instance: nil, type: "orders", segments: ["2026", "17"], query: [:], dryRun: true))
    /// ```
    public func deepLink(
        _ params: CoordinatorDeepLinkRequest.Params
    ) async throws(ResponseError) -> CoordinatorDeepLinkRequest.Result {
        try await handshake()
        return try await request(CoordinatorDeepLinkRequest.self, params)
    }

    /// `coordinator/destroy` (after the handshake, which it runs if needed).
    ///
    /// ```swift
    /// try await connection.destroy(.init(instance: InstanceID(2), type: "shop"))
    /// ```
    public func destroy(_ params: CoordinatorDestroyRequest.Params) async throws(ResponseError) {
        try await handshake()
        _ = try await request(CoordinatorDestroyRequest.self, params)
    }

    // MARK: - Plugin to host

    /// Answers the plugin's requests of type `R` (`navigate`, `tree/query`) with `answer`; throw a
    /// ``ResponseError`` to answer with an error. Without a handler the plugin gets `methodNotFound`, as from a host
    /// that does not know the method.
    ///
    /// ```swift
    /// connection.onRequest(NavigateRequest.self) { params in
    ///     .init(revision: 7, instance: params.instance ?? InstanceID(1))
    /// }
    /// ```
    public func onRequest<R: PluginToHostRequest>(
        _ type: R.Type, _ answer: @escaping @MainActor (R.Params) throws(ResponseError) -> R.Result
    ) {
        endpoint.onRequest(R.self) { params, responder in
            responder.reply(encoding: Result { () throws(ResponseError) in try answer(params) })
        }
    }

    /// The params of every request of type `R` the plugin sent, in order (answered or not).
    ///
    /// ```swift
    /// #expect(connection.requests(NavigateRequest.self).map(\.steps) == [[.popToRoot]])
    /// ```
    public func requests<R: PluginToHostRequest>(_ type: R.Type) -> [R.Params] {
        received.compactMap { message in
            guard case .request(_, R.method, let params) = message else { return nil }
            return try? Coding.decode(R.Params.self, from: params)
        }
    }

    /// The params of every notification of type `N` the plugin sent, in order.
    ///
    /// ```swift
    /// #expect(connection.notifications(LogNotification.self).map(\.message) == ["ready"])
    /// ```
    public func notifications<N: PluginToHostNotification>(_ type: N.Type) -> [N.Params] {
        received.compactMap { message in
            guard case .notification(N.method, let params) = message else { return nil }
            return try? Coding.decode(N.Params.self, from: params)
        }
    }

    /// The plugin's log notifications, in order (plugin code logs with `runtime.log(_:_:)`).
    ///
    /// ```swift
    /// #expect(connection.logs.contains { $0.level == .warning })
    /// ```
    public var logs: [LogNotification.Params] { notifications(LogNotification.self) }
}
