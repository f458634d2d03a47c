import SwitchyardNavigation
import SwitchyardProtocol

/// The host's supervisors, one per plugin the manifest names, and those whose entry could not even be resolved.
///
/// This is what the navigator sees of the plugins (``PluginDirectory``): a part of its own rather than the host
/// itself, so the navigator never reaches into the host, and a test can stand in for it.
///
/// - Important: Loop thread only (owned by the ``Host`` actor).
final class PluginSupervisors: PluginDirectory {
    /// In the manifest's order.
    private(set) var all: [PluginSupervisor] = []
    private var byName: [String: PluginSupervisor] = [:]
    /// Entries that could not be resolved (no such product, no such file): failed before any process.
    private var unresolved: [PluginStatus] = []
    /// The manifest's order of names, for status lists (a reload changes it).
    var order: [String]

    init(order: [String]) { self.order = order }

    func add(_ supervisor: PluginSupervisor) {
        all.append(supervisor)
        byName[supervisor.name] = supervisor
    }

    func addUnresolved(_ status: PluginStatus) { unresolved.append(status) }

    subscript(_ name: String) -> PluginSupervisor? { byName[name] }

    /// A plugin the manifest no longer names (a reload, spec §20.2): gone from every list.
    func remove(_ name: String) {
        all.removeAll { $0.name == name }
        byName[name] = nil
        unresolved.removeAll { $0.name == name }
        order.removeAll { $0 == name }
    }

    /// Plugins the manifest names, resolved or not.
    var count: Int { all.count + unresolved.count }

    /// Every plugin's status, in the manifest's order.
    var statuses: [PluginStatus] {
        let known = all.map(\.status) + unresolved
        return order.compactMap { name in known.first { $0.name == name } }
    }

    /// Lets go of the closures the host gave each supervisor (they hold the host): the loop has closed.
    func detach() {
        for supervisor in all { supervisor.detach() }
    }

    // MARK: - PluginDirectory

    func session(_ plugin: String) -> PluginSession? {
        guard let supervisor = byName[plugin], supervisor.state == .ready,
            let session = supervisor.session, session.state == .ready
        else { return nil }
        return session
    }

    func session(for plugin: String, bypassHold: Bool) async -> Result<PluginSession, ResponseError> {
        guard let supervisor = byName[plugin] else { return .failure(.pluginUnavailable(plugin, "it is not running")) }
        return await supervisor.session(
            waitingUpTo: supervisor.plugin.limits.requestTimeoutMs, bypassHold: bypassHold)
    }

    func availability(of plugin: String) -> (status: InstanceSnapshot.Status, reason: String?) {
        guard let supervisor = byName[plugin] else { return (.unavailable, "plugin '\(plugin)' is not running") }
        if supervisor.serves { return (.ok, nil) }
        return (.unavailable, supervisor.lastError?.message ?? "plugin '\(plugin)' is \(supervisor.state)")
    }

    var unavailablePlugins: [String: String?] {
        var result: [String: String?] = [:]
        for (name, supervisor) in byName where !supervisor.serves {
            result[name] = supervisor.lastError?.message ?? "plugin '\(name)' is \(supervisor.state)"
        }
        return result
    }

    func incarnation(of plugin: String) -> Int { byName[plugin]?.incarnation ?? 0 }

    func maxInstances(of plugin: String) -> Int { byName[plugin]?.plugin.limits.maxInstances ?? .max }
}
