/// Every method of the protocol, with its kind and direction: the Swift side of `Protocol/schema/methods.json`
/// (a test keeps the two identical).
public enum ProtocolMethods {
    public enum Kind: String, Sendable { case request, notification }

    public enum Direction: String, Sendable {
        case hostToPlugin, pluginToHost, both, clientToHost, hostToClient
    }

    public struct Entry: Sendable, Equatable {
        public let method: String
        public let kind: Kind
        public let direction: Direction
    }

    public static let all: [Entry] = [
        Entry(method: InitializeRequest.method, kind: .request, direction: .hostToPlugin),
        Entry(method: InitializedNotification.method, kind: .notification, direction: .hostToPlugin),
        Entry(method: PingRequest.method, kind: .request, direction: .both),
        Entry(method: ShutdownRequest.method, kind: .request, direction: .hostToPlugin),
        Entry(method: ExitNotification.method, kind: .notification, direction: .hostToPlugin),
        Entry(method: LogNotification.method, kind: .notification, direction: .pluginToHost),
        Entry(method: CoordinatorCreateRequest.method, kind: .request, direction: .hostToPlugin),
        Entry(method: CoordinatorRouteRequest.method, kind: .request, direction: .hostToPlugin),
        Entry(method: CoordinatorDestroyRequest.method, kind: .request, direction: .hostToPlugin),
        Entry(method: CoordinatorDeepLinkRequest.method, kind: .request, direction: .hostToPlugin),
        Entry(method: CoordinatorDismissedNotification.method, kind: .notification, direction: .hostToPlugin),
        Entry(method: CoordinatorTabSelectedNotification.method, kind: .notification, direction: .hostToPlugin),
        Entry(method: CoordinatorActionRequest.method, kind: .request, direction: .hostToPlugin),
        Entry(method: CoordinatorAppearedNotification.method, kind: .notification, direction: .hostToPlugin),
        Entry(method: NavigateRequest.method, kind: .request, direction: .pluginToHost),
        Entry(method: TreeQueryRequest.method, kind: .request, direction: .pluginToHost),
        // The control interface (Protocol/README.md §15): `navigate`, `tree/query` and `$/ping` are shared.
        Entry(method: OpenRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: ValidateRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TreeGetRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TreeRenderRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TreeSubscribeRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TreeUnsubscribeRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TreeHistoryRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: UserDismissedRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: UserActionRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: HostStatusRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: HostShutdownRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: PluginStartRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TraceSubscribeRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TraceUnsubscribeRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: HostPluginsRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: PluginSignalRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: PluginRestartRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: PluginToxicsRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: PluginLimitsRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: DeepLinkCancelRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: DeepLinkPendingRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: PluginUpgradeRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: HostReloadRequest.method, kind: .request, direction: .clientToHost),
        Entry(method: TreeChangedNotification.method, kind: .notification, direction: .hostToClient),
        Entry(method: PluginChangedNotification.method, kind: .notification, direction: .hostToClient),
        Entry(method: CoordinatorDestroyedNotification.method, kind: .notification, direction: .hostToClient),
        Entry(method: TraceEventNotification.method, kind: .notification, direction: .hostToClient),
        Entry(method: DeepLinkChangedNotification.method, kind: .notification, direction: .hostToClient),
    ]
}
