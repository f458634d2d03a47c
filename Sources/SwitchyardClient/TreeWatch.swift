public import SwitchyardProtocol

/// Watching the tree with deltas (spec §15): the host sends each change as a JSON Patch against the tree the client
/// holds, so a change to one instance of a large tree costs a few hundred bytes instead of the whole snapshot.
extension ControlClient {
    /// Subscribes with `deltas` (and, like `tree/subscribe`, to `plugin/changed` and `coordinator/destroyed`);
    /// returns the current tree, the one the first patch applies to.
    public func watchTree() throws(Failure) -> TreeSnapshot {
        try call(TreeSubscribeRequest.self, .init(deltas: true))
    }

    /// Waits for the next `tree/changed` (skipping other notifications) and returns `tree` with it applied.
    public func nextTree(after tree: TreeSnapshot) throws(Failure) -> TreeSnapshot {
        let params = try nextNotification(TreeChangedNotification.method)
        return try Self.apply(params, to: tree)
    }

    /// `tree` after a `tree/changed` notification's params; a protocol violation when they do not apply to it.
    public static func apply(_ params: JSONValue?, to tree: TreeSnapshot) throws(Failure) -> TreeSnapshot {
        let change: TreeChangedNotification.Params
        do { change = try JSONValueDecoder().decode(TreeChangedNotification.Params.self, from: params ?? .null) } catch
        {
            throw .protocolViolation("the host sent an invalid tree/changed: \(error)")
        }
        do { return try tree.applying(change) } catch {
            throw .protocolViolation("the host sent a tree/changed that does not apply: \(error.message)")
        }
    }
}

extension AsyncControlClient {
    /// Subscribes with `deltas`; returns the current tree. Apply each `tree/changed` of ``notifications`` with
    /// ``ControlClient/apply(_:to:)``.
    public func watchTree() async throws(Failure) -> TreeSnapshot {
        try await call(TreeSubscribeRequest.self, .init(deltas: true))
    }
}
