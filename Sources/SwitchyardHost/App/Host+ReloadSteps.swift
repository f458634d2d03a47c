import Logging
import SwitchyardNavigation
import SwitchyardProtocol

/// How an added plugin joins: its process already answered, or (lazy, with a contract) without one.
enum AddedStart {
    case process(PluginSession, InitializeRequest.Result)
    case lazy(InitializeRequest.Result)
}

/// A reload whose every check passed: nothing has changed yet.
struct PreparedReload {
    var added: [(PluginSupervisor, AddedStart)] = []
    var upgrades: [PreparedUpgrade] = []
    /// Changed entries of plugins that do not serve now (stopped, failed): they take the new entry as it is.
    var respecified: [PluginManifest] = []
}

// The steps of a reload (Host+Reload.swift): what it prepares before its point of no return, and what it applies.
extension Host {
    /// Starts every new process (added plugins, changed entries' new versions) beside the running app and judges the
    /// new app as a whole: its composition (§14) and, for each changed plugin, what the tree (as `treeAfter`, once
    /// the removed plugins' instances are dismissed) uses of it. Any failure stops every new process and refuses the
    /// reload; nothing has changed.
    func prepareReload(_ plan: ReloadPlan, treeAfter: NavigationTree) async throws(ResponseError) -> PreparedReload {
        var prepared = PreparedReload()
        do throws(ResponseError) {
            let added = try plan.added.map { entry throws(ResponseError) in (entry, try resolve(entry)) }
            let upgraded = try plan.upgraded.map { entry throws(ResponseError) in (entry, try resolve(entry)) }
            var tables: [String: [CoordinatorDeclaration]?] = Dictionary(
                uniqueKeysWithValues: plan.removed.map { ($0, nil) })
            for (entry, resolved) in added {
                let supervisor = makeSupervisor(resolved)
                if entry.start == .lazy, case .success(let table) = contractTable(of: entry) {
                    prepared.added.append((supervisor, .lazy(table)))
                    tables[entry.name] = table.coordinators
                    continue
                }
                switch await supervisor.startCandidate(resolved) {
                case .success(let (session, table)):
                    prepared.added.append((supervisor, .process(session, table)))
                    tables[entry.name] = table.coordinators
                case .failure(let error):
                    throw ResponseError(
                        error.code,
                        "the reload adds plugin '\(entry.name)', which did not start: \(error.message); nothing changed",
                        data: error.data)
                }
            }
            for (entry, resolved) in upgraded {
                guard let supervisor = plugins[entry.name],
                    [.ready, .lazy, .hibernated].contains(supervisor.state)
                else {
                    prepared.respecified.append(entry)
                    continue
                }
                let plan = UpgradePlan(
                    supervisor: supervisor, target: resolved, probationMs: 10_000, rollback: true,
                    fromVersion: supervisor.status.version, fromPID: supervisor.status.pid)
                // Judged below, with the whole new app.
                let upgrade = try await prepareUpgrade(plan) { _ in
                    UpgradeCheck(refusal: nil, changes: [], composition: nil)
                }
                prepared.upgrades.append(upgrade)
                tables[entry.name] = upgrade.table.coordinators
            }
            let whole = navigator.composition(
                changing: tables, declared: plan.manifest.plugins.map(\.name), root: plan.manifest.root)
            let errors = whole.issues.filter { $0.severity == .error }
            var problems = errors.map(\.description)
            for (index, upgrade) in prepared.upgrades.enumerated() {
                let check = checkUpgrade(
                    upgrade.plan.supervisor, to: upgrade.table, tree: treeAfter, composition: whole)
                if let refusal = check.refusal { problems.append(refusal.message) }
                prepared.upgrades[index] = PreparedUpgrade(
                    plan: upgrade.plan, candidate: upgrade.candidate, table: upgrade.table, changes: check.changes)
            }
            guard problems.isEmpty else {
                throw ResponseError(
                    .compositionError,
                    "the reloaded app would not hold together; nothing changed: \(problems.joined(separator: "; "))",
                    data: ["issues": .array(problems.map(JSONValue.string))])
            }
            return prepared
        } catch {
            for upgrade in prepared.upgrades { abandonUpgrade(upgrade) }
            for (supervisor, _) in prepared.added { supervisor.discardCandidate() }
            retiredSupervisors += prepared.added.map(\.0)
            logger.error("reload refused: \(error.message)")
            throw error
        }
    }

    /// An added plugin joins the app (§14) and serves; returns its status.
    func join(_ supervisor: PluginSupervisor, _ start: AddedStart) async -> HostStatusRequest.Plugin {
        let name = supervisor.name
        plugins.add(supervisor)
        switch start {
        case .lazy(let table):
            supervisor.routeTable = table
            supervisor.lifecycle.tableFromContract = true
            navigator.adopt(
                navigator.composition(
                    changing: [name: table.coordinators], declared: manifest.plugins.map(\.name), root: manifest.root))
            supervisor.setState(.lazy)
            logger.notice("reload: plugin '\(name)' joined, lazy (its contract)")
        case .process(let session, let table):
            // Answered by `pluginServes` once it has joined the composition and created its placeholders.
            let served = await withCheckedContinuation { continuation in
                startWaiters[name, default: []].append(continuation)
                supervisor.adopt(session, as: supervisor.plugin, table: table)
            }
            if case .failure(let error) = served {
                logger.error("reload: plugin '\(name)' did not join: \(error.message)")
            }
            if supervisor.plugin.manifest.start == .lazy, navigator.tree.instanceCount(of: name) == 0 {
                supervisor.hibernate(as: .lazy)
            }
        }
        return supervisor.status.wire
    }

    /// A changed entry the running process keeps: its restart policy, hibernation and start mode apply now (a lazy
    /// plugin made eager starts); a plugin that does not serve takes the new entry as it is (a failed one is
    /// started again with it).
    func reconfigure(_ entry: PluginManifest) -> String {
        guard let supervisor = plugins[entry.name] else { return entry.name }
        do throws(ResponseError) { supervisor.plugin = try resolve(entry) } catch {
            logger.warning("reload: plugin '\(entry.name)': \(error.message)")
            return entry.name
        }
        configureLifecycle(supervisor)
        if entry.start != .lazy, supervisor.state == .lazy { supervisor.wake() }
        if supervisor.state == .failed { _ = supervisor.startAgain() }
        return entry.name
    }

    /// A plugin the manifest no longer names leaves: out of the composition, stopped with the shutdown ladder.
    func remove(_ name: String) {
        navigator.adopt(
            navigator.composition(changing: [name: nil], declared: manifest.plugins.map(\.name), root: manifest.root))
        guard let supervisor = plugins[name] else {
            plugins.remove(name)
            return
        }
        plugins.remove(name)
        retiredSupervisors.append(supervisor)
        supervisor.stop(graceMs: options.shutdownGraceMs)
        logger.notice("reload: plugin '\(name)' removed")
    }
}
