/// `exit` (host → plugin): exit now. Exit code 0 if `shutdown` came first, 1 otherwise.
public enum ExitNotification: HostToPluginNotification {
    public static let method = "exit"
    public typealias Params = Empty
}
