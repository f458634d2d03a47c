import Logging
import SwitchyardNavigation
import SwitchyardProtocol

// Chains nobody asked for: what a restored tree lacks (spec §17) and placeholders whose plugin now serves (§11).
// Each is one chain and one revision, run one after another, so each starts from the tree the previous committed.
extension Navigator {
    /// Gives a restored tree the content today's tables declare and it lacks (``TreeMerge/Missing``): a new tab
    /// from its owner (`coordinator/route`), or a stack or wrapper that lost its root or child restarted (reason
    /// `restart`). Failures are logged; the tree keeps what it has.
    func addMissing(_ missing: [TreeMerge.Missing]) async {
        let repairs = missing.map { item -> Repair in
            switch item {
            case .tab(let id, let route):
                Repair(what: "tab '\(route)' of \(id)") { tree, registry, allocator throws(ResponseError) in
                    try ChainRunner.addingTab(
                        tree: tree, registry: registry, allocator: allocator, instance: id, tab: route)
                }
            case .content(let id):
                Repair(what: "the content of \(id)") { tree, registry, allocator in
                    ChainRunner(tree: tree, registry: registry, allocator: allocator, start: id, steps: [.restart])
                }
            }
        }
        let failed = await run(repairs, as: .restore)
        if failed > 0 {
            logger.warning(
                "state file: \(failed) of \(repairs.count) parts the route tables declare could not be added")
        }
    }

    /// Creates every placeholder of `plugin`, which now serves, in it (`coordinator/create`, reason `new`), parents
    /// first: the tab that was unavailable comes alive. A placeholder its plugin refuses stays one (logged).
    func createPlaceholders(of plugin: String) async {
        guard creatingPlaceholders[plugin] == nil else {
            // Being created: look again when that is done (the plugin came back meanwhile).
            creatingPlaceholders[plugin] = true
            return
        }
        var again = true
        while again {
            let pending = tree.pendingInstances(of: plugin)
            guard !pending.isEmpty else { break }
            creatingPlaceholders[plugin] = false
            let repairs = pending.map { id in
                Repair(what: "placeholder \(plugin)\(id)") { tree, registry, allocator throws(ResponseError) in
                    try ChainRunner.creatingPlaceholder(
                        tree: tree, registry: registry, allocator: allocator, instance: id)
                }
            }
            let failed = await run(repairs, as: .placeholders)
            logger.notice(
                "plugin '\(plugin)' serves: \(pending.count - failed) of \(pending.count) placeholders created")
            again = creatingPlaceholders.removeValue(forKey: plugin) ?? false
        }
    }

    /// One chain to run: how to make its runner from the tree of the moment.
    struct Repair {
        let what: String
        let runner: (NavigationTree, RouteRegistry, IDAllocator) throws(ResponseError) -> ChainRunner
    }

    /// Runs `repairs` one after another, each revision recorded as `cause`; returns how many failed.
    private func run(_ repairs: [Repair], as cause: RevisionRecord.Cause) async -> Int {
        var failed = 0
        for repair in repairs {
            let base = tree
            do throws(ResponseError) {
                let runner = try repair.runner(base, registry, allocator)
                let (result, changed) = try await runChain(runner, base: base).get()
                send(result.effects)
                if changed {
                    recordRevision(cause, summary: repair.what, touched: result.touched)
                    treeChanged()
                }
            } catch {
                logger.warning("cannot add \(repair.what): \(error.message)")
                failed += 1
            }
        }
        return failed
    }
}
