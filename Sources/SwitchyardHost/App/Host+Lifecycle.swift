import Logging
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem

/// Why a lazy plugin's contract cannot stand for it.
struct ContractUnavailable: Error {
    let reason: String
}

// Plugins without a process while nobody needs them (spec §20.3): lazy start from a contract, hibernation when idle,
// the wake that restores them; and the old version brought back after a failed probation (§20.1).
extension Host {
    /// Gives a supervisor its lifecycle settings (from its manifest entry) and the host's side of them.
    func wireLifecycle(_ supervisor: PluginSupervisor) {
        configureLifecycle(supervisor)
        supervisor.lifecycle.isIdle = { supervisor in self.isIdle(supervisor) }
        supervisor.lifecycle.onPublish = { supervisor in self.navigator.publish(.pluginChanged(supervisor.status)) }
        supervisor.lifecycle.onProcessGone = { _ in if self.shuttingDown { self.checkStopped() } }
    }

    /// The entry's hibernation settings, applied to the running plugin (also after a reload).
    func configureLifecycle(_ supervisor: PluginSupervisor) {
        let entry = supervisor.plugin.manifest
        supervisor.lifecycle.graceMs = options.shutdownGraceMs
        supervisor.lifecycle.hibernateAfterMs = entry.hibernateAfterMs
        supervisor.lifecycle.maxStateBytes =
            entry.maxHibernatedStateBytes ?? PluginManifest.defaultMaxHibernatedStateBytes
        if supervisor.state == .ready { supervisor.armIdleTimer() }
    }

    /// Starts a plugin with the app, or, for `"start": "lazy"` with a readable contract, leaves it `lazy`: the app
    /// composes with its contract's table. A lazy plugin without one is started once to read its table, and stops
    /// again once the app has started if nothing needs it (``settleLazyPlugins()``).
    func launch(_ supervisor: PluginSupervisor) {
        let entry = supervisor.plugin.manifest
        guard entry.start == .lazy else {
            supervisor.start()
            return
        }
        switch contractTable(of: entry) {
        case .success(let table):
            supervisor.routeTable = table
            supervisor.lifecycle.tableFromContract = true
            logger.info("plugin '\(entry.name)' is lazy: composed from \(entry.contractPath), started on first need")
            supervisor.setState(.lazy)
        case .failure(let problem):
            logger.notice("plugin '\(entry.name)' is lazy but \(problem.reason): started once to read its route table")
            supervisor.start()
        }
    }

    /// A lazy entry's route table from its contract file (§19: `contract`, else `contracts/NAME.json`).
    func contractTable(of entry: PluginManifest) -> Result<InitializeRequest.Result, ContractUnavailable> {
        let path = entry.contractPath
        let bytes: [UInt8]
        do { bytes = try FileSystem.readRegularFile(path, maxBytes: RouteContract.maxFileBytes) } catch {
            return .failure(ContractUnavailable(reason: "its contract \(path) cannot be read (\(error))"))
        }
        do {
            let contract = try RouteContract(parsing: bytes)
            return .success(
                InitializeRequest.Result(
                    protocolVersion: contract.protocolVersion, plugin: contract.plugin,
                    coordinators: contract.coordinators))
        } catch {
            return .failure(
                ContractUnavailable(reason: "its contract \(path) is not a route contract (\(error.description))"))
        }
    }

    /// Once the app has started: a lazy plugin that was started only to read its table, and that nothing used, stops
    /// until it is needed.
    func settleLazyPlugins() {
        for supervisor in plugins.all where supervisor.plugin.manifest.start == .lazy && supervisor.state == .ready {
            guard navigator.tree.instanceCount(of: supervisor.name) == 0 else { continue }
            supervisor.hibernate(as: .lazy)
        }
    }

    /// Whether a plugin may hibernate now (spec §20.3): no chain in flight consulted it, none of its instances is
    /// on the selected path, no one waits for it to start, and the state of its instances fits the bound (else it
    /// keeps running, logged once per crossing).
    func isIdle(_ supervisor: PluginSupervisor) -> Bool {
        let name = supervisor.name
        guard !shuttingDown, startupComplete, !navigator.isConsulted(name), startWaiters[name] == nil,
            !restartRequested.contains(name)
        else { return false }
        let tree = navigator.tree
        guard !tree.selectedPath.contains(where: { tree[$0]?.plugin == name }) else { return false }
        let bytes = tree.stateBytes(of: name)
        let bound = supervisor.lifecycle.maxStateBytes
        guard bytes <= bound else {
            if !supervisor.lifecycle.overStateBound {
                supervisor.lifecycle.overStateBound = true
                logger.notice(
                    "plugin '\(name)' is idle but keeps running: its instances hold \(bytes) bytes of state, more than maxHibernatedStateBytes (\(bound))"
                )
            }
            return false
        }
        supervisor.lifecycle.overStateBound = false
        return true
    }

    /// A woken or rolled-back plugin's restore, when it is not the plain one of a restart; returns true if done here.
    ///
    /// - A plugin composed from its contract (lazy) declares its table for the first time: it must keep what the
    ///   contract promised (no breaking change, §19.3), else it is failed with `-32017`; its table replaces the
    ///   contract's.
    /// - After a failed probation the old version is restored from the tree: an instance whose state is still the
    ///   one the switch gave it gets its state from before the upgrade back (`restore`); one the new version changed
    ///   since goes through the old version's migration hook (`upgrade`, `fromVersion` the new version). Entries of
    ///   routes the old version does not declare are popped first.
    func restoreWoken(_ supervisor: PluginSupervisor, via session: PluginSession) async -> Bool {
        if let rollback = supervisor.lifecycle.rollingBack {
            await restoreRollback(supervisor, via: session, rollback)
            supervisor.finishRollback()
            return true
        }
        guard supervisor.lifecycle.tableFromContract, let table = session.routeTable else { return false }
        supervisor.lifecycle.tableFromContract = false
        let name = supervisor.name
        if let promised = supervisor.routeTable {
            let broken = ContractComparison.diff(
                RouteContract(
                    plugin: promised.plugin, protocolVersion: promised.protocolVersion,
                    coordinators: promised.coordinators),
                RouteContract(
                    plugin: table.plugin, protocolVersion: table.protocolVersion, coordinators: table.coordinators)
            ).filter(\.isBreaking)
            guard broken.isEmpty else {
                supervisor.fail(
                    ResponseError(
                        .compositionError,
                        "plugin '\(name)' does not keep the contract the app was composed with (\(supervisor.plugin.manifest.contractPath)): \(broken.map { "[\($0.rule.rawValue)] \($0.pointer): \($0.message)" }.joined(separator: "; "))",
                        data: ["plugin": .string(name)]))
                return true
            }
        }
        let report = navigator.composition(
            changing: [name: table.coordinators], declared: manifest.plugins.map(\.name), root: manifest.root)
        if report.issues.allSatisfy({ $0.severity != .error }) { navigator.adopt(report) }
        supervisor.routeTable = table
        return false
    }

    private func restoreRollback(
        _ supervisor: PluginSupervisor, via session: PluginSession, _ rollback: Probation
    ) async {
        let name = supervisor.name
        if let table = rollback.previousTable {
            await popUnsupportedEntries(of: name, declared: table.coordinators)
            let report = navigator.composition(
                changing: [name: table.coordinators], declared: manifest.plugins.map(\.name), root: manifest.root)
            navigator.adopt(report)
        }
        var requests = navigator.tree.restoreRequests(for: name)
        for index in requests.indices {
            let id = requests[index].instance
            if let before = rollback.statesBefore[id], rollback.statesAfter[id] == requests[index].state {
                requests[index].state = before
            } else if requests[index].state != nil {
                requests[index].reason = .upgrade
                requests[index].fromVersion = rollback.newVersion
            }
        }
        let answers = await navigator.create(requests, in: session)
        var states: [InstanceID: JSONValue?] = [:]
        var failed = 0
        for (request, answer) in zip(requests, answers) {
            switch answer {
            case .success(let result): states.updateValue(result.state ?? request.state, forKey: request.instance)
            case .failure(let error):
                failed += 1
                logger.warning(
                    "rollback of '\(name)': \(request.type)\(request.instance) not restored: \(error.message)")
            }
        }
        _ = navigator.commitSwitch(
            states,
            summary:
                "plugin '\(name)' rolled back to \(rollback.previousTable?.plugin.version ?? "?"): \(requests.count - failed) of \(requests.count) instances restored"
        )
        logger.notice(
            "plugin '\(name)' rolled back to \(rollback.previousTable?.plugin.version ?? "?"): \(requests.count - failed) of \(requests.count) instances restored"
        )
    }

    /// Pops every stack entry of `plugin`'s instances whose route `declared` does not have (one chain each): what
    /// a version that is going away opened and the version coming back does not know.
    private func popUnsupportedEntries(of plugin: String, declared: [CoordinatorDeclaration]) async {
        let routes = Dictionary(declared.map { ($0.type, Set($0.routes.map(\.name))) }, uniquingKeysWith: { a, _ in a })
        for instance in navigator.tree.instances(of: plugin) where instance.kind == .stack {
            let known = routes[instance.type] ?? []
            guard let first = instance.entries.first(where: { !known.contains($0.route) }) else { continue }
            do throws(ResponseError) {
                _ = try await navigator.navigate(from: instance.id, steps: [.pop(first.id)], requester: .control)
                logger.notice("rollback of '\(plugin)': popped entry \(first.id) ('\(first.route)') of \(instance.id)")
            } catch {
                logger.warning(
                    "rollback of '\(plugin)': cannot pop entry \(first.id) of \(instance.id): \(error.message)")
            }
        }
    }
}
