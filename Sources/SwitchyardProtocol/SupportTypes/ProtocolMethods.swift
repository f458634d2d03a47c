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
    ]
}
