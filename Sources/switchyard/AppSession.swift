import SwitchyardClient
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol

/// What the command language needs from an app: the host in this process (`switchyard run`, its prompt and
/// scripts) or a running host over its control socket (`switchyard nav`, `dismissed`, `expect`…), so a command
/// means the same, and is written the same, in both.
protocol AppSession: Sendable {
    func open(_ request: OpenRequest.Params) async throws -> OpenRequest.Result
    /// `deepLink/cancel`: the link it dropped, or nil.
    func cancelDeepLink(id: Int?) async throws -> DeferredDeepLink?
    func pendingDeepLink() async throws -> DeferredDeepLink?
    func validate(_ url: String) async throws -> ValidateRequest.Result
    func navigate(from instance: InstanceID?, _ steps: [NavigationStep]) async throws -> NavigateRequest.Result
    func userDismissed(instance: InstanceID, entry: EntryID) async throws -> NavigateRequest.Result
    func userAction(
        instance: InstanceID, entry: EntryID, action: String, params: JSONValue?
    ) async throws -> NavigateRequest.Result
    func snapshot() async throws -> TreeSnapshot
    func render(_ format: TreeRenderRequest.Format) async throws -> String
    func query(_ query: TreeQueryRequest.Params) async throws -> JSONValue
    func plugins() async throws -> [HostStatusRequest.Plugin]
    /// One element per tree change (and per deferred deep link's change) from now on (for `wait`).
    func treeChanges() async throws -> AsyncStream<Void>
}

extension HostHandle: AppSession {
    func plugins() async throws -> [HostStatusRequest.Plugin] {
        await status().map { status in
            HostStatusRequest.Plugin(
                name: status.name, state: "\(status.state)", pid: status.pid, version: status.version,
                restarts: status.restarts,
                error: status.error)
        }
    }

    func treeChanges() async throws -> AsyncStream<Void> {
        let events = events()
        return AsyncStream { continuation in
            let task = Task {
                for await event in events {
                    switch event {
                    case .treeChanged, .deepLinkChanged: continuation.yield()
                    case .pluginChanged, .destroyed: break
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// A running host reached over its control socket. A typed error from the host is thrown as the
/// ``ResponseError`` itself, as the in-process host throws it, so messages read the same.
struct RemoteSession: AppSession {
    let client: AsyncControlClient

    private func call<R: ControlRequest>(_ type: R.Type, _ params: R.Params) async throws -> R.Result {
        do { return try await client.call(type, params) } catch {
            if case .response(let response) = error { throw response }
            if case .timeout = error { throw RunFailure.noAnswer(error) }
            throw RunFailure(.unavailable, message: error.description)
        }
    }

    func open(_ request: OpenRequest.Params) async throws -> OpenRequest.Result {
        try await call(OpenRequest.self, request)
    }
    func cancelDeepLink(id: Int?) async throws -> DeferredDeepLink? {
        try await call(DeepLinkCancelRequest.self, .init(id: id)).cancelled
    }
    func pendingDeepLink() async throws -> DeferredDeepLink? {
        try await call(DeepLinkPendingRequest.self, Empty()).pending
    }
    func validate(_ url: String) async throws -> ValidateRequest.Result {
        try await call(ValidateRequest.self, .init(url: url))
    }

    func navigate(from instance: InstanceID?, _ steps: [NavigationStep]) async throws -> NavigateRequest.Result {
        try await call(NavigateRequest.self, .init(instance: instance, steps: steps))
    }

    func userDismissed(instance: InstanceID, entry: EntryID) async throws -> NavigateRequest.Result {
        try await call(UserDismissedRequest.self, .init(instance: instance, entry: entry))
    }

    func userAction(
        instance: InstanceID, entry: EntryID, action: String, params: JSONValue?
    ) async throws -> NavigateRequest.Result {
        try await call(UserActionRequest.self, .init(instance: instance, entry: entry, action: action, params: params))
    }

    func snapshot() async throws -> TreeSnapshot { try await call(TreeGetRequest.self, Empty()) }
    func render(_ format: TreeRenderRequest.Format) async throws -> String {
        try await call(TreeRenderRequest.self, .init(format: format)).text
    }
    func query(_ query: TreeQueryRequest.Params) async throws -> JSONValue {
        try await call(TreeQueryRequest.self, query).result
    }
    func plugins() async throws -> [HostStatusRequest.Plugin] {
        try await call(HostStatusRequest.self, Empty()).plugins
    }

    func treeChanges() async throws -> AsyncStream<Void> {
        _ = try await call(TreeSubscribeRequest.self, .init(snapshots: false))
        let notifications = client.notifications
        return AsyncStream { continuation in
            let task = Task {
                for await message in notifications {
                    if case .notification(let method, _) = message,
                        method == TreeChangedNotification.method || method == DeepLinkChangedNotification.method
                    {
                        continuation.yield()
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
