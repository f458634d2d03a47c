import Logging
import SwitchyardNavigation
import SwitchyardProtocol

// Chains nobody asked for: what a restored tree lacks (spec §17) and placeholders whose plugin now serves (§11).
// Each is one chain and one revision, run one after another, so each starts from the tree the previous committed.
extension Navigator {
    /// Gives a restored tree the content today's tables declare and it lacks (``TreeMerge/Missing``): a new tab
    /// from its owner (`coordinator/route`), or a stack or wrapper that lost its root or child restarted (reason
    /// `restart`). Failures are logged; the tree keeps what it has.
    func addMissing(_ missing: [TreeMerge.Missing], _ completion: @escaping () -> Void) {
        let repairs = missing.map { item -> Repair in
            switch item {
            case .tab(let id, let route):
                Repair(what: "tab '\(route)' of \(id)") { tree, registry, allocator throws(ResponseError) in
                    try ChainRunner.addingTab(tree: tree, registry: registry, allocator: allocator, instance: id, tab: route)
                }
            case .content(let id):
                Repair(what: "the content of \(id)") { tree, registry, allocator in
                    ChainRunner(tree: tree, registry: registry, allocator: allocator, start: id, steps: [.restart])
                }
            }
        }
        run(repairs[...]) { [weak self] failed in
            if failed > 0 { self?.logger.warning("state file: \(failed) of \(repairs.count) parts the route tables declare could not be added") }
            completion()
        }
    }

    /// Creates every placeholder of `plugin`, which now serves, in it (`coordinator/create`, reason `new`), parents
    /// first: the tab that was unavailable comes alive. A placeholder its plugin refuses stays one (logged).
    func createPlaceholders(of plugin: String, _ completion: @escaping () -> Void = {}) {
        guard creatingPlaceholders[plugin] == nil else {
            creatingPlaceholders[plugin] = true
            return completion()
        }
        let pending = tree.pendingInstances(of: plugin)
        guard !pending.isEmpty else { return completion() }
        creatingPlaceholders[plugin] = false
        let repairs = pending.map { id in
            Repair(what: "placeholder \(plugin)\(id)") { tree, registry, allocator throws(ResponseError) in
                try ChainRunner.creatingPlaceholder(tree: tree, registry: registry, allocator: allocator, instance: id)
            }
        }
        run(repairs[...]) { [weak self] failed in
            guard let self else { return completion() }
            logger.notice("plugin '\(plugin)' serves: \(pending.count - failed) of \(pending.count) placeholders created")
            let again = creatingPlaceholders.removeValue(forKey: plugin) ?? false
            if again { createPlaceholders(of: plugin) }
            completion()
        }
    }

    /// One chain to run: how to make its runner from the tree of the moment.
    struct Repair {
        let what: String
        let runner: (NavigationTree, RouteRegistry, IDAllocator) throws(ResponseError) -> ChainRunner
    }

    /// Runs `repairs` one after another; calls `completion` with how many failed.
    private func run(_ repairs: ArraySlice<Repair>, failed: Int = 0, _ completion: @escaping (Int) -> Void) {
        guard let repair = repairs.first else { return completion(failed) }
        let base = tree
        let runner: ChainRunner
        do throws(ResponseError) { runner = try repair.runner(base, registry, allocator) } catch {
            logger.warning("cannot add \(repair.what): \(error.message)")
            return run(repairs.dropFirst(), failed: failed + 1, completion)
        }
        runChain(runner, base: base) { [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .success(let (result, changed)):
                send(result.effects)
                if changed { treeChanged() }
                run(repairs.dropFirst(), failed: failed, completion)
            case .failure(let error):
                logger.warning("cannot add \(repair.what): \(error.message)")
                run(repairs.dropFirst(), failed: failed + 1, completion)
            }
        }
    }
}
