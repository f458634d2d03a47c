/// `shutdown` (host → plugin): release resources and answer; do not exit yet (LSP semantics). The `exit`
/// notification follows, then stdin closes.
public enum ShutdownRequest: HostToPluginRequest {
    public static let method = "shutdown"
    public typealias Params = Empty
    public typealias Result = Empty
}
