import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol

/// What an experiment sees the host publish.
enum ExperimentEvent: Sendable {
    /// A new revision, with the victim's instance at it and, from a host run as a child, the whole tree (what a
    /// restored tree is compared with).
    case tree(revision: UInt64, victim: InstanceSnapshot?, whole: TreeSnapshot?)
    /// A plugin changed state.
    case plugin(HostStatusRequest.Plugin)
    /// Everything before this has been recorded: the monitor calls it (``ChildHost/flushEvents()``).
    case flushed(@Sendable () -> Void)
}

/// The host an experiment drives: in this process (``HostHandle``), or a `switchyard run` child that the experiment
/// can kill and start again, and whose disk it can fill (``ChildHost``). The load, the faults and the monitor go
/// through this alone, so both run one experiment.
protocol ExperimentHost: Sendable {
    /// Every event from now on, across host lifetimes (a child host's stream finishes when the experiment stops it).
    func events(victim: String) -> AsyncStream<ExperimentEvent>
    func status() async -> [HostStatusRequest.Plugin]
    func snapshot() async -> TreeSnapshot
    func registry() async -> RouteRegistry
    func navigate(from instance: InstanceID?, _ steps: [NavigationStep]) async throws(ResponseError) -> UInt64
    func open(_ url: String) async throws(ResponseError) -> UInt64
    func userAction(instance: InstanceID, entry: EntryID, action: String) async throws(ResponseError) -> UInt64
    func userDismissed(instance: InstanceID, entry: EntryID) async throws(ResponseError) -> UInt64
    func signal(plugin: String, _ signal: PluginSignalRequest.Signal) async
    func setToxics(_ params: PluginToxicsRequest.Params) async
    func setLimits(_ params: PluginLimitsRequest.Params) async
}

extension ExperimentHost {
    func navigate(_ steps: [NavigationStep]) async throws(ResponseError) -> UInt64 {
        try await navigate(from: nil, steps)
    }
}

/// The in-process host: ``HostHandle`` as an ``ExperimentHost``.
struct InProcessHost: ExperimentHost {
    let handle: HostHandle

    func events(victim: String) -> AsyncStream<ExperimentEvent> {
        let events = handle.events()
        let (stream, continuation) = AsyncStream<ExperimentEvent>.makeStream(bufferingPolicy: .unbounded)
        let relay = Task {
            for await event in events {
                switch event {
                case .treeChanged(let change):
                    // The snapshot is built only when some monitor reads it; the victim's instance is all the model
                    // needs.
                    let instance = change.snapshot.instances.first { $0.plugin == victim }
                    continuation.yield(.tree(revision: change.revision, victim: instance, whole: nil))
                case .pluginChanged(let status): continuation.yield(.plugin(status.wire))
                default: break
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in relay.cancel() }
        return stream
    }

    func status() async -> [HostStatusRequest.Plugin] { await handle.status().map(\.wire) }
    func snapshot() async -> TreeSnapshot { await handle.snapshot() }
    func registry() async -> RouteRegistry { await handle.routeRegistry() }

    func navigate(from instance: InstanceID?, _ steps: [NavigationStep]) async throws(ResponseError) -> UInt64 {
        try await handle.navigate(from: instance, steps).revision
    }

    func open(_ url: String) async throws(ResponseError) -> UInt64 { try await handle.open(url).revision }

    func userAction(instance: InstanceID, entry: EntryID, action: String) async throws(ResponseError) -> UInt64 {
        try await handle.userAction(instance: instance, entry: entry, action: action).revision
    }

    func userDismissed(instance: InstanceID, entry: EntryID) async throws(ResponseError) -> UInt64 {
        try await handle.userDismissed(instance: instance, entry: entry).revision
    }

    func signal(plugin: String, _ signal: PluginSignalRequest.Signal) async {
        // Straight to the process group, as `plugin/signal` does, without its check that the process still runs:
        // a fault that lands while its target restarts is the experiment's to record, not an error.
        await handle.signal(plugin: plugin, signal.number)
    }

    func setToxics(_ params: PluginToxicsRequest.Params) async { _ = try? await handle.setToxics(params) }
    func setLimits(_ params: PluginLimitsRequest.Params) async { _ = try? await handle.setLimits(params) }
}
