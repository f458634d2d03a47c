import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardUV

/// Whether a new version may replace the running one, and how its contract differs.
struct UpgradeCheck {
    /// Why not (`-32017`, each finding named); nil: it may.
    let refusal: ResponseError?
    /// The differences between the old and the new contract (§19.3), for the answer.
    let changes: [ContractChange]
    /// The app's composition with the new table in place of the old one (nil: not judged here).
    let composition: CompositionReport?
}

extension Host {
    /// Judges a new version's route table against the running app (spec §20.1) with the contract code of §19: the
    /// composition of §14 with the new table in place of the old (the other modules' references to it, its own to
    /// them), and everything the tree uses of the plugin (``ContractComparison/check(_:supports:)``).
    ///
    /// A reload judges several changes at once: it passes the composition of the whole new manifest (`composition`,
    /// whose errors it reports itself) and the tree as its dismissals would leave it (`tree`).
    func checkUpgrade(
        _ supervisor: PluginSupervisor, to table: InitializeRequest.Result, tree: NavigationTree? = nil,
        composition: CompositionReport? = nil
    ) -> UpgradeCheck {
        let name = supervisor.name
        let report =
            composition
            ?? navigator.composition(
                changing: [name: table.coordinators], declared: manifest.plugins.map(\.name), root: manifest.root)
        let issues = composition == nil ? report.issues.filter { $0.severity == .error } : []
        let new = RouteContract(
            plugin: table.plugin, protocolVersion: table.protocolVersion, coordinators: table.coordinators)
        let findings = ContractComparison.check(
            new, supports: ContractUsage(tree: tree ?? navigator.tree, plugin: name))
        let changes =
            supervisor.routeTable.map { old in
                ContractComparison.diff(
                    RouteContract(
                        plugin: old.plugin, protocolVersion: old.protocolVersion, coordinators: old.coordinators),
                    new)
            } ?? []
        let wire = changes.map {
            ContractChange(
                rule: $0.rule.rawValue, breaking: $0.isBreaking, pointer: "\($0.pointer)", message: $0.message)
        }
        guard !issues.isEmpty || !findings.isEmpty else {
            return UpgradeCheck(refusal: nil, changes: wire, composition: report)
        }
        let problems = findings.map { "[\($0.rule.rawValue)] \($0.pointer): \($0.message)" } + issues.map(\.description)
        let from = supervisor.status.version ?? "?"
        let refusal = ResponseError(
            .compositionError,
            "the upgrade of plugin '\(name)' \(from) → \(table.plugin.version) was refused, the old version serves on: \(problems.count) problem\(problems.count == 1 ? "" : "s"): \(problems.joined(separator: "; "))",
            data: [
                "plugin": .string(name), "from": .string(from), "to": .string(table.plugin.version),
                "findings": .array(
                    findings.map {
                        [
                            "rule": .string($0.rule.rawValue), "pointer": .string("\($0.pointer)"),
                            "message": .string($0.message),
                        ]
                    }),
                "issues": .array(issues.map { .string($0.description) }),
            ])
        return UpgradeCheck(refusal: refusal, changes: wire, composition: report)
    }

    /// Waits until every chain that consulted the plugin has finished and no request to `session` is pending, or
    /// `milliseconds` of the loop's running time have passed. New chains do not consult it meanwhile: the gate holds
    /// them. Nil when drained; otherwise what was still in flight when the time ran out, in words (the rollback's
    /// message says it, so a drain that did not finish explains itself).
    ///
    /// Running time, as every deadline that judges a plugin (§6.1): a host whose loop stalls (a busy machine, a
    /// stopped host) must not blame the old version for requests it was itself too slow to finish.
    func drain(_ supervisor: PluginSupervisor, _ session: PluginSession, withinMs milliseconds: Int) async -> String? {
        let drained: Bool = await withCheckedContinuation { continuation in
            var finished = false
            let timer = try? UVTimer(loop: loop)
            let finish: (Bool) -> Void = { drained in
                guard !finished else { return }
                finished = true
                timer?.close()
                continuation.resume(returning: drained)
            }
            let (loop, budget, started) = (loop, UInt64(max(0, milliseconds)), loop.activeNow)
            // Each time the timer fires, the running time is read after the poll (where this iteration's stall is
            // accounted); what the stalls took is waited for again.
            func arm(after remaining: UInt64) {
                try? timer?.start(after: remaining) {
                    loop.afterNextPoll {
                        let ran = loop.activeNow &- started
                        if ran >= budget { finish(false) } else { arm(after: budget - ran) }
                    }
                }
            }
            arm(after: budget)
            spawn {
                await self.navigator.afterChainsConsulting(supervisor.name)
                session.whenNoRequestsPending { finish(true) }
            }
        }
        guard !drained else { return nil }
        let chains = navigator.scheduler.consultingCount(supervisor.name)
        let pending = session.pendingMethods.sorted { $0.key < $1.key }.map { "\($0.value) '\($0.key)'" }
        return
            "\(chains == 1 ? "1 chain" : "\(chains) chains") that consulted it still running, "
            + (pending.isEmpty ? "no request pending" : "requests pending: \(pending.joined(separator: ", "))")
    }
}
