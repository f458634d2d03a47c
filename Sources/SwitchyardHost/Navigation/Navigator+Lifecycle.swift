import Logging
import SwitchyardNavigation
import SwitchyardProtocol

/// Plugins whose instances are moving to a new version, and the chains waiting to commit changes to them.
struct FreezeState {
    var plugins = Set<String>()
    var waiters: [CheckedContinuation<Void, Never>] = []
}

// What an upgrade needs of the navigator (spec §20.1): the plugin's instances held still while they move, the
// migration's requests, the switch's revision, and the plugin's new route table.
extension Navigator {
    // MARK: - Freezing a plugin's instances

    /// From now on a chain that would change an instance of `plugin` (a pop on its stack, a tab selected, one of its
    /// instances removed) waits before it commits until ``unfreeze(_:)``: the new version is created from the tree
    /// as it is now, and must hear of every change after it (the chain commits against the tree of the switch, its
    /// notifications going to the new version).
    func freeze(_ plugin: String) { freeze.plugins.insert(plugin) }

    /// Lets the chains waiting on `plugin`'s instances commit.
    func unfreeze(_ plugin: String) {
        guard freeze.plugins.remove(plugin) != nil else { return }
        let waiters = freeze.waiters
        freeze.waiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Waits while `result` changes an instance of a frozen plugin (checked again after each unfreeze).
    func waitWhileFrozen(_ result: ChainResult, base: NavigationTree) async {
        while changesFrozen(result, base: base) {
            // Checked again where the waiter is registered: an unfreeze may come between.
            await withCheckedContinuation { continuation in
                guard changesFrozen(result, base: base) else { return continuation.resume() }
                logger.debug("a chain waits to commit: it changes instances of \(freeze.plugins.sorted()), which move")
                freeze.waiters.append(continuation)
            }
        }
    }

    private func changesFrozen(_ result: ChainResult, base: NavigationTree) -> Bool {
        guard !freeze.plugins.isEmpty else { return false }
        return result.touched.contains { id in
            let before = base[id]
            let after = result.tree[id]
            guard before != after, let plugin = before?.plugin ?? after?.plugin else { return false }
            return freeze.plugins.contains(plugin)
        }
    }

    /// Whether a chain in flight consulted `plugin` (it is not idle).
    func isConsulted(_ plugin: String) -> Bool { scheduler.isConsulted(plugin) }

    // MARK: - Creating instances in a process

    /// Sends every request to `session` at once (pipelined, in gathered writes) and returns each answer in the
    /// request's order: a restore's or an upgrade's batch.
    func create(
        _ requests: [CoordinatorCreateRequest.Params], in session: PluginSession
    ) async -> [Result<CoordinatorCreateRequest.Result, ResponseError>] {
        guard !requests.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            var answers = [Result<CoordinatorCreateRequest.Result, ResponseError>?](
                repeating: nil, count: requests.count)
            var remaining = requests.count
            session.batchingWrites {
                for (index, params) in requests.enumerated() {
                    session.send(
                        encoding: CoordinatorCreateRequest.self, params,
                        reading: CoordinatorCreateRequest.Result.init(reading:)
                    ) { result in
                        answers[index] = result
                        remaining -= 1
                        if remaining == 0 {
                            continuation.resume(
                                returning: answers.map { $0 ?? .failure(ResponseError(.internalError, "no answer")) })
                        }
                    }
                }
            }
        }
    }

    // MARK: - The switch

    /// The switch's revision: the instances take the states their new version answered, in one revision that
    /// changes no id, entry or selection; published like any change, and in the history as `summary` says (a
    /// reloaded Studio must not show a gap where an upgrade was). Returns the revision.
    func commitSwitch(_ states: [InstanceID: JSONValue?], summary: String) -> UInt64 {
        var switched = tree
        let changed = switched.commitStates(states)
        tree = switched
        recordRevision(.upgrade, summary: summary, touched: Set(states.keys))
        treeChanged(touched: changed)
        return tree.revision
    }

    /// The composition of §14 over the running plugins' tables with `changes` applied (a table in place of a
    /// plugin's, or added; nil: the plugin removed): what the app would be. The caller adopts it (``adopt(_:)``) if
    /// it has no error.
    func composition(
        changing changes: [String: [CoordinatorDeclaration]?], declared: [String], root: CoordinatorReference?
    ) -> CompositionReport {
        var tables = registry.plugins.filter { changes[$0] == nil }.map {
            (plugin: $0, coordinators: registry.coordinators(of: $0))
        }
        for plugin in changes.keys.sorted() {
            if let coordinators = changes[plugin] ?? nil { tables.append((plugin, coordinators)) }
        }
        let rootKey = root.map { RouteRegistry.TypeKey(plugin: $0.plugin ?? "", type: $0.type) }
        return Composition.check(tables: tables, declaredPlugins: declared, root: rootKey)
    }

    /// Takes a composition checked by ``composition(changing:declared:root:)`` as the app's:
    /// the route tables every chain resolves against from now on. The errors found at start stay (the plugins they
    /// left out are still out); the warnings are today's.
    func adopt(_ report: CompositionReport) {
        let kept = composition?.issues.filter { $0.severity == .error } ?? []
        composition = CompositionReport(
            issues: kept + report.issues, excluded: composition?.excluded ?? [], registry: report.registry,
            fatal: composition?.fatal)
        registry = report.registry
    }
}
