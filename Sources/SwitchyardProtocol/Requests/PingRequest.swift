/// `$/ping`: a liveness check, either direction. Answered at once with `{}`.
/// The host pings idle plugins; one that stops answering is treated as hung.
public enum PingRequest: HostToPluginRequest, PluginToHostRequest, ControlRequest {
    public static let method = "$/ping"
    public typealias Params = Empty
    public typealias Result = Empty
}
