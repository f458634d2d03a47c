/// `initialized` (host → plugin): the handshake is complete; the plugin may now receive coordinator requests.
public enum InitializedNotification: HostToPluginNotification {
    public static let method = "initialized"
    public typealias Params = Empty
}
