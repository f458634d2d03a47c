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
    func restoreLoaded(_ saved: NavigationTree) async -> Bool {
        let merge = saved.merged(with: navigator.registry, plugins: Set(manifest.plugins.map(\.name)))
        guard merge.tree.root != nil else {
            _ = stateStore?.setAside("its root no longer fits the route tables")
            return false
        }
        for part in merge.dropped { logger.notice("state file: dropped \(part)") }
        navigator.adopt(merge.tree)
        let ready = plugins.all.filter { $0.state == .ready }
        unrestored = Set(plugins.all.filter { $0.state != .ready }.map(\.name))
        // Every ready plugin's instances at once: each restore is one pipelined batch to its own process.
        let targets = ready.compactMap { supervisor in
            supervisor.session.flatMap {
                navigator.tree.instanceCount(of: supervisor.name) > 0 ? (supervisor.name, $0) : nil
            }
        }
        for (plugin, failures) in await navigator.restore(targets) where !failures.isEmpty {
            logger.warning("plugin '\(plugin)': \(failures.count) instances could not be restored")
        }
        await navigator.addMissing(merge.missing)
        for supervisor in ready { await navigator.createPlaceholders(of: supervisor.name) }
        return true
    }

    /// A plugin serves after the app started: restarted (its instances restored already), or for the first time
    /// (it failed at start and `plugin/start` brought it up). A newcomer joins the composition first (refused: it is
    /// failed with the reason) and gets its instances the tree kept while it did not serve restored; then its
    /// placeholders are created, and whoever asked for it to start is answered.
    func pluginServes(_ supervisor: PluginSupervisor) async {
        let name = supervisor.name
        if !navigator.registry.has(plugin: name), let table = supervisor.routeTable {
            if let refusal = navigator.join(
                plugin: name, coordinators: table.coordinators, declared: manifest.plugins.map(\.name),
                root: manifest.root)
            {
                supervisor.fail(refusal)
                return
            }
        }
        if unrestored.remove(name) != nil, let session = supervisor.session,
            navigator.tree.instances(of: name).contains(where: { !$0.isPending })
        {
            let failures = await navigator.restore([(name, session)])[name] ?? []
            if !failures.isEmpty {
                logger.warning("plugin '\(name)': \(failures.count) instances could not be restored")
            }
        }
        await navigator.createPlaceholders(of: name)
        answerStartWaiters(supervisor)
    }

    /// `plugin/start`: starts a plugin that is not running again; returns once it serves (or failed again).
    func startPlugin(_ name: String) async -> Result<HostStatusRequest.Plugin, ResponseError> {
        guard let supervisor = plugins[name] else {
            let known = pluginStatuses.first { $0.name == name }
            return .failure(
                known?.error
                    ?? ResponseError(
                        .invalidParams, "the manifest names no plugin '\(name)'", data: ["field": "plugin"]))
        }
        guard !shuttingDown else { return .failure(ResponseError(.shuttingDown, "the host is shutting down")) }
        if supervisor.state == .ready, navigator.creatingPlaceholders[name] == nil {
            return .success(supervisor.status.wire)
        }
        return await withCheckedContinuation { continuation in
            // Decided here again: the task may resume here after other work on the loop.
            if supervisor.state == .ready, navigator.creatingPlaceholders[name] == nil {
                return continuation.resume(returning: .success(supervisor.status.wire))
            }
            startWaiters[name, default: []].append(continuation)
            // A lazy or hibernated plugin is woken, as a request would wake it (spec §20.3).
            if supervisor.state == .lazy || supervisor.state == .hibernated {
                supervisor.wake()
            } else {
                _ = supervisor.startAgain()
            }
        }
    }

    /// Answers the `plugin/start` requests waiting for `supervisor`: it serves, or it failed (with why).
    func answerStartWaiters(_ supervisor: PluginSupervisor) {
        guard let waiters = startWaiters.removeValue(forKey: supervisor.name) else { return }
        let result: Result<HostStatusRequest.Plugin, ResponseError> =
            supervisor.state == .ready
            ? .success(supervisor.status.wire)
            : .failure(supervisor.lastError ?? .pluginUnavailable(supervisor.name, "it is \(supervisor.state)"))
        for waiter in waiters { waiter.resume(returning: result) }
    }
}
