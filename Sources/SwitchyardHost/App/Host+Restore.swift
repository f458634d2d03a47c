import Logging
import SwitchyardNavigation
import SwitchyardProtocol

// What comes back: a tree from the state file, fitted to today's route tables (spec §17), and a plugin that serves
// again or for the first time, whose placeholders are then created (§11, §16), on its own or on `plugin/start`.
extension Host {
    /// Why a tree from the state file cannot be this app's at all (nil: it can; ``restoreLoaded(_:)`` fits it).
    func incompatibility(of tree: NavigationTree, root: CoordinatorReference) -> String? {
        guard let saved = tree.root else { return "it holds no root" }
        if saved.type != root.type || (root.plugin != nil && saved.plugin != root.plugin) {
            return "its root is \(saved.plugin).\(saved.type), the manifest's is \(root)"
        }
        return nil
    }

    /// Adopts the saved tree fitted to today's route tables (what they no longer declare dropped, one log line
    /// each), re-creates every instance in its ready plugin as after a restart, then adds what the tables declare
    /// and the tree lacks, and creates the placeholders of the plugins that serve. Start-up ends after all that, so
    /// the first client sees the whole tree. Returns false (the file set aside) if not even its root fits.
    func restoreLoaded(_ saved: NavigationTree) -> Bool {
        let merge = saved.merged(with: navigator.registry, plugins: Set(manifest.plugins.map(\.name)))
        guard merge.tree.root != nil else {
            _ = stateStore?.setAside("its root no longer fits the route tables")
            return false
        }
        for part in merge.dropped { logger.notice("state file: dropped \(part)") }
        navigator.adopt(merge.tree)
        let ready = supervisors.filter { $0.state == .ready }
        unrestored = Set(supervisors.filter { $0.state != .ready }.map(\.name))
        var remaining = ready.count + 1
        let restored = { [weak self] in
            remaining -= 1
            guard remaining == 0, let self else { return }
            navigator.addMissing(merge.missing) { [weak self] in
                self?.createPlaceholders(ready.map(\.name)[...]) { self?.finishStartup(error: nil) }
            }
        }
        for supervisor in ready {
            guard let connection = supervisor.connection, navigator.tree.instanceCount(of: supervisor.name) > 0 else {
                restored()
                continue
            }
            navigator.restore(plugin: supervisor.name, via: connection) { [weak self] failures in
                if !failures.isEmpty { self?.logger.warning("plugin '\(supervisor.name)': \(failures.count) instances could not be restored") }
                restored()
            }
        }
        restored()
        return true
    }

    private func createPlaceholders(_ plugins: ArraySlice<String>, _ completion: @escaping () -> Void) {
        guard let plugin = plugins.first else { return completion() }
        navigator.createPlaceholders(of: plugin) { [weak self] in self?.createPlaceholders(plugins.dropFirst(), completion) }
    }

    /// A plugin serves after the app started: restarted (its instances restored already), or for the first time
    /// (it failed at start and `plugin/start` brought it up). A newcomer joins the composition first (refused: it is
    /// failed with the reason) and gets its instances the tree kept while it did not serve restored; then its
    /// placeholders are created, and whoever asked for it to start is answered.
    func pluginServes(_ supervisor: PluginSupervisor) {
        let name = supervisor.name
        if !navigator.registry.has(plugin: name), let table = supervisor.routeTable {
            if let refusal = navigator.join(plugin: name, coordinators: table.coordinators, declared: manifest.plugins.map(\.name), root: manifest.root) {
                supervisor.fail(refusal)
                return
            }
        }
        let placeholders = { [weak self] () -> Void in
            self?.navigator.createPlaceholders(of: name) { self?.answerStartWaiters(supervisor) }
        }
        guard unrestored.remove(name) != nil, let connection = supervisor.connection,
            navigator.tree.instances(of: name).contains(where: { !$0.isPending })
        else { return placeholders() }
        navigator.restore(plugin: name, via: connection) { [weak self] failures in
            if !failures.isEmpty { self?.logger.warning("plugin '\(name)': \(failures.count) instances could not be restored") }
            placeholders()
        }
    }

    /// `plugin/start`: starts a plugin that is not running again and answers once it serves (or failed again).
    func startPlugin(_ name: String, _ done: @escaping (Result<HostStatusRequest.Plugin, ResponseError>) -> Void) {
        guard let supervisor = supervisorsByName[name] else {
            let known = pluginStatuses.first { $0.name == name }
            done(.failure(known?.error ?? ResponseError(.invalidParams, "the manifest names no plugin '\(name)'", data: ["field": "plugin"])))
            return
        }
        guard !shuttingDown else { return done(.failure(ResponseError(.shuttingDown, "the host is shutting down"))) }
        if supervisor.state == .ready, creatingPlaceholders(of: name) == false { return done(.success(supervisor.status.wire)) }
        startWaiters[name, default: []].append(done)
        _ = supervisor.startAgain()
    }

    private func creatingPlaceholders(of plugin: String) -> Bool { navigator.creatingPlaceholders[plugin] != nil }

    /// Answers the `plugin/start` requests waiting for `supervisor`: it serves, or it failed (with why).
    func answerStartWaiters(_ supervisor: PluginSupervisor) {
        guard let waiters = startWaiters.removeValue(forKey: supervisor.name) else { return }
        let result: Result<HostStatusRequest.Plugin, ResponseError> =
            supervisor.state == .ready
            ? .success(supervisor.status.wire)
            : .failure(supervisor.lastError ?? .pluginUnavailable(supervisor.name, "it is \(supervisor.state)"))
        for waiter in waiters { waiter(result) }
    }
}
