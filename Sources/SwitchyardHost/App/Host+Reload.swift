import Logging
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem

/// What a reload changes, entry by entry (spec §20.2).
struct ReloadPlan {
    let manifest: Manifest
    /// New names, in the new manifest's order.
    var added: [PluginManifest] = []
    /// Names the new manifest no longer has.
    var removed: [String] = []
    /// Changed entries that need a new process (command, env, limits…): upgraded.
    var upgraded: [PluginManifest] = []
    /// Changed entries the running process keeps (restart policy, start mode, hibernation, contract).
    var reconfigured: [PluginManifest] = []
    var unchanged: [String] = []

    init(from old: Manifest, to new: Manifest) {
        manifest = new
        let before = Dictionary(old.plugins.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.plugins.map(\.name))
        for entry in new.plugins {
            guard let previous = before[entry.name] else {
                added.append(entry)
                continue
            }
            if entry == previous {
                unchanged.append(entry.name)
            } else if entry.needsNewProcess(comparedTo: previous) {
                upgraded.append(entry)
            } else {
                reconfigured.append(entry)
            }
        }
        removed = old.plugins.map(\.name).filter { !after.contains($0) }
    }
}

// `host/reload` and `SIGHUP` (spec §20.2), as systemd's `Type=notify-reload` makes a reload synchronous: the answer
// comes when it is done. Everything that can refuse it runs before anything changes — the manifest read as `run`
// reads it, the removed plugins' instances, every new process's handshake, the composition of the whole new app and
// what the tree uses of each changed plugin — so a refused reload changes nothing. Then, in order: the removed
// plugins' instances dismissed (`force`), the added plugins joined, the changed ones upgraded, the removed ones
// stopped.
extension Host {
    func reload(force: Bool) async throws(ResponseError) -> HostReloadRequest.Result {
        guard !shuttingDown else { throw ResponseError(.shuttingDown, "the host is shutting down") }
        guard !reloading else {
            throw ResponseError(.notAllowed, "a reload is in progress; one at a time", data: ["method": "host/reload"])
        }
        guard let path = manifest.path else {
            throw ResponseError(
                .notAllowed, "this host was started without a manifest file: there is nothing to read again",
                data: ["method": "host/reload"])
        }
        reloading = true
        defer { reloading = false }
        let next = try readManifest(path)
        let plan = ReloadPlan(from: manifest, to: next)
        logger.notice(
            "reload \(path): \(plan.added.count) added, \(plan.removed.count) removed, \(plan.upgraded.count) to upgrade, \(plan.reconfigured.count) reconfigured, \(plan.unchanged.count) unchanged"
        )

        // What the removed plugins hold in the tree, and the tree once they are dismissed.
        let removed = Set(plan.removed)
        let dismissals = navigator.tree.allInstances.filter {
            removed.contains($0.plugin)
                && !removed.contains(navigator.tree[$0.parent?.instance ?? InstanceID(0)]?.plugin ?? "")
        }.sorted { $0.id.rawValue < $1.id.rawValue }
        if !dismissals.isEmpty && !force {
            let named = dismissals.map { "\($0.plugin).\($0.type)\($0.id)" }
            throw ResponseError(
                .notAllowed,
                "the reload removes plugins whose instances are in the tree: \(named.joined(separator: ", ")); dismiss them first, or reload with --force to dismiss them",
                data: [
                    "instances": .array(
                        dismissals.map {
                            ["instance": .int($0.id.rawValue), "plugin": .string($0.plugin), "type": .string($0.type)]
                        }),
                    "flag": "--force",
                ])
        }
        let treeAfter = try dryRunDismissals(dismissals)

        // Every new process starts and answers; then the new app must compose and keep what the tree uses.
        let prepared = try await prepareReload(plan, treeAfter: treeAfter)

        // The point of no return.
        manifest = next
        plugins.order = next.plugins.map(\.name)
        var result = HostReloadRequest.Result(manifest: path, unchanged: plan.unchanged)
        for instance in dismissals {
            do throws(ResponseError) {
                _ = try await navigator.navigate(from: instance.id, steps: [.dismissCoordinator], requester: .control)
                result.dismissed.append(instance.id)
            } catch {
                logger.warning("reload: cannot dismiss \(instance.plugin)\(instance.id): \(error.message)")
            }
        }
        for (supervisor, candidate) in prepared.added {
            result.added.append(await join(supervisor, candidate))
        }
        for entry in plan.reconfigured + prepared.respecified { result.reconfigured.append(reconfigure(entry)) }
        for upgrade in prepared.upgrades {
            do throws(ResponseError) { result.upgraded.append(try await completeUpgrade(upgrade)) } catch {
                result.failed.append(.init(plugin: upgrade.plan.supervisor.name, error: error))
            }
        }
        for name in plan.removed { remove(name) }
        result.removed = plan.removed
        logger.notice(
            "reloaded \(path): added \(result.added.map(\.name)), removed \(result.removed), upgraded \(result.upgraded.map(\.plugin)), reconfigured \(result.reconfigured), failed \(result.failed.map(\.plugin))"
        )
        return result
    }

    /// The manifest as `run` reads it; any error refuses the reload whole, with the same `file:line:column`
    /// messages. The root and the app's name cannot change while the app runs.
    private func readManifest(_ path: String) throws(ResponseError) -> Manifest {
        let next: Manifest
        do { next = try Manifest.load(path: path) } catch {
            let lines = error.diagnostics.map { diagnostic in
                guard let position = diagnostic.position else { return diagnostic.description }
                return
                    "\(diagnostic.path):\(position.line):\(position.column): \(diagnostic.severity.rawValue): \(diagnostic.message)"
            }
            throw ResponseError(
                .invalidParams,
                "the manifest has \(error.diagnostics.count == 1 ? "an error" : "\(error.diagnostics.count) errors"); nothing changed: \(lines.joined(separator: "; "))",
                data: [
                    "field": "manifest", "file": .string(error.path),
                    "diagnostics": .array(error.diagnostics.map { .string($0.description) }),
                ])
        }
        for (what, before, after) in [
            ("root", manifest.root.map { "\($0)" }, next.root.map { "\($0)" }), ("app", manifest.app, next.app),
        ] where before != after {
            throw ResponseError(
                .invalidParams,
                "the manifest changes '\(what)' (\(before ?? "none") → \(after ?? "none")), which cannot change while the app runs: restart it; nothing changed",
                data: ["field": .string(what), "file": .string(path)])
        }
        return next
    }

    /// The tree as it would be once `instances` are dismissed (`dismissCoordinator`, each on the tree the previous
    /// left): what the changed plugins' new versions must still support. One that cannot be dismissed (a tab, a
    /// stack's root, the tree's root) refuses the reload.
    private func dryRunDismissals(_ instances: [Instance]) throws(ResponseError) -> NavigationTree {
        var tree = navigator.tree
        for instance in instances {
            guard tree[instance.id] != nil else { continue }  // gone with one dismissed before
            let runner = ChainRunner(
                tree: tree, registry: navigator.registry, allocator: IDAllocator(continuing: tree),
                start: instance.id, steps: [.dismissCoordinator])
            switch runner.advance() {
            case .done(let result): tree = result.tree
            case .failed(let failure):
                throw ResponseError(
                    failure.error.code,
                    "the reload removes plugin '\(instance.plugin)', whose instance \(instance.type)\(instance.id) cannot be dismissed: \(failure.error.message); nothing changed",
                    data: failure.error.data)
            case .needs:
                throw ResponseError(
                    .notAllowed,
                    "dismissing \(instance.type)\(instance.id) would need a plugin's answer; nothing changed",
                    data: ["instance": .int(instance.id.rawValue)])
            }
        }
        return tree
    }
}
