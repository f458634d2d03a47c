/// Protocol versions are integers; a new major behaviour gets a new number (see `Protocol/CHANGES.md`).
public enum ProtocolVersion {
    /// The versions this build speaks, newest first. The host offers all of them in `initialize`.
    public static let supported: [Int] = [1]
    public static let current = 1
}
