import Logging
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// One upgrade as it runs: what it replaces, with what, and how its switch is reported.
struct UpgradePlan {
    let supervisor: PluginSupervisor
    let target: ResolvedPlugin
    let probationMs: Int
    let rollback: Bool
    let fromVersion: String?
    let fromPID: Int32?
}

/// An upgrade whose new version has started and passed its check: nothing has changed yet.
struct PreparedUpgrade {
    let plan: UpgradePlan
    let candidate: PluginSession
    let table: InitializeRequest.Result
    let changes: [ContractChange]
}

// A new version of a plugin taking over from the running one (spec §20.1), as Erlang/OTP's release handler does it:
// the new code is loaded beside the old, checked, then the old process is suspended, its state migrated
// (`code_change`) and resumed as the new one. Every failure before the switch (the point of no return) rolls back and
// changes nothing; after it, a probation brings the old version back if the new one crashes.
extension Host {
    /// `plugin/upgrade`.
    func upgradePlugin(
        _ request: PluginUpgradeRequest.Params
    ) async throws(ResponseError) -> PluginUpgradeRequest.Result {
        guard let supervisor = plugins[request.plugin] else {
            throw ResponseError(
                .invalidParams, "the manifest names no plugin '\(request.plugin)'", data: ["field": "plugin"])
        }
        let target = try resolveUpgrade(request, of: supervisor.plugin)
        let probationMs = max(0, request.probationMs ?? 10_000)
        let plan = UpgradePlan(
            supervisor: supervisor, target: target, probationMs: request.noRollback == true ? 0 : probationMs,
            rollback: request.noRollback != true, fromVersion: supervisor.status.version,
            fromPID: supervisor.status.pid)
        var result = try await upgrade(plan)
        if request.waitForProbation == true, result.probation.state == .running {
            if let failure = await supervisor.probationOutcome() {
                result.outcome = .rolledBack
                result.reason = failure
                result.probation.state = .failed
            } else {
                result.probation.state = .passed
            }
        }
        return result
    }

    /// The new version's spawn options: the entry with the request's `command` or `product` (and `args`) in place
    /// of its own; without either, the entry as it is (a new build at the same path).
    private func resolveUpgrade(
        _ request: PluginUpgradeRequest.Params, of current: ResolvedPlugin
    ) throws(ResponseError) -> ResolvedPlugin {
        var entry = current.manifest
        if let command = request.command {
            guard !command.isEmpty else {
                throw ResponseError(.invalidParams, "'command' is empty", data: ["field": "command"])
            }
            entry.command = command
            entry.product = nil
            entry.args = request.args
        } else if let product = request.product {
            entry.product = product
            entry.command = nil
            entry.args = request.args
        } else if let args = request.args {
            entry.args = args
        }
        return try resolve(entry)
    }

    /// A manifest entry as the host starts it, or `invalidParams` naming what cannot be started.
    func resolve(_ entry: PluginManifest) throws(ResponseError) -> ResolvedPlugin {
        do {
            return try entry.resolve(
                manifestDirectory: manifest.directory ?? FileSystem.currentDirectory,
                productsDirectory: options.productsDirectory, hostEnvironment: SystemProcess.environment)
        } catch {
            throw ResponseError(
                .invalidParams, "cannot start the new version of '\(entry.name)': \(error.message)",
                data: ["plugin": .string(entry.name), "field": entry.product != nil ? "product" : "command"])
        }
    }

    /// Runs one upgrade to its switch (or its rollback) and answers what happened.
    func upgrade(_ plan: UpgradePlan) async throws(ResponseError) -> PluginUpgradeRequest.Result {
        try await completeUpgrade(try await prepareUpgrade(plan) { self.checkUpgrade(plan.supervisor, to: $0) })
    }

    /// The upgrade up to the point where the old version would stop taking requests: the new version started
    /// beside it and judged (`judge`: the check of §20.1, or a reload's). Nothing changed yet; the caller completes
    /// it (``completeUpgrade(_:)``) or abandons it (``abandonUpgrade(_:)``).
    func prepareUpgrade(
        _ plan: UpgradePlan, judge: (InitializeRequest.Result) -> UpgradeCheck
    ) async throws(ResponseError) -> PreparedUpgrade {
        let supervisor = plan.supervisor
        let name = supervisor.name
        guard !shuttingDown else { throw ResponseError(.shuttingDown, "the host is shutting down") }
        guard !supervisor.lifecycle.upgrading, supervisor.lifecycle.rollingBack == nil else {
            throw ResponseError(
                .notAllowed,
                "plugin '\(name)' is being upgraded (\(supervisor.lifecycle.upgrade?.phase.rawValue ?? "?")); one upgrade at a time",
                data: ["plugin": .string(name)])
        }
        if supervisor.lifecycle.probation != nil {
            // The operator moves on: the version on probation is kept, and is what this upgrade would roll back to.
            logger.notice("plugin '\(name)': a new upgrade ends the probation of \(plan.fromVersion ?? "?")")
            supervisor.endProbation(failure: nil)
        }
        guard [.ready, .lazy, .hibernated].contains(supervisor.state) else {
            throw .pluginUnavailable(name, "it is \(supervisor.state): an upgrade replaces a version that serves")
        }
        supervisor.lifecycle.upgrading = true
        logger.notice("upgrading plugin '\(name)' \(plan.fromVersion ?? "?"): starting the new version beside it")
        supervisor.upgradePhase(.starting, from: plan.fromVersion, to: nil)

        // 1. The new version starts beside the old one, which serves meanwhile.
        let (candidate, table): (PluginSession, InitializeRequest.Result)
        switch await supervisor.startCandidate(plan.target) {
        case .success(let started): (candidate, table) = started
        case .failure(let error):
            supervisor.lifecycle.upgrading = false
            supervisor.upgradePhase(.failed, from: plan.fromVersion, to: nil)
            throw upgradeFailed(name, "the new version did not complete its handshake", error)
        }

        // 2. Its contract must support what the app uses and references.
        let check = judge(table)
        if let refusal = check.refusal {
            abandonUpgrade(PreparedUpgrade(plan: plan, candidate: candidate, table: table, changes: []), .refused)
            logger.error("\(refusal.message)")
            throw refusal
        }
        return PreparedUpgrade(plan: plan, candidate: candidate, table: table, changes: check.changes)
    }

    /// Stops a prepared upgrade's new version; nothing changed.
    func abandonUpgrade(_ prepared: PreparedUpgrade, _ phase: PluginUpgradeStatus.Phase = .failed) {
        let supervisor = prepared.plan.supervisor
        supervisor.discardCandidate()
        supervisor.lifecycle.upgrading = false
        supervisor.upgradePhase(phase, from: prepared.plan.fromVersion, to: prepared.table.plugin.version)
    }

    /// From the hold to the switch (or a rollback before it), then the probation; answers what happened.
    func completeUpgrade(_ prepared: PreparedUpgrade) async throws(ResponseError) -> PluginUpgradeRequest.Result {
        let (plan, candidate, table) = (prepared.plan, prepared.candidate, prepared.table)
        let supervisor = plan.supervisor
        let name = supervisor.name
        let toVersion = table.plugin.version
        defer { supervisor.lifecycle.upgrading = false }

        // 3. The old version's new requests wait; those in flight finish.
        let heldAt = UVLoop.hrtime
        supervisor.lifecycle.gate.hold()
        supervisor.upgradePhase(.holding, from: plan.fromVersion, to: toVersion)
        let drainMs = supervisor.plugin.limits.requestTimeoutMs
        if let old = supervisor.session, supervisor.state == .ready,
            let inFlight = await drain(supervisor, old, withinMs: drainMs)
        {
            throw rollBack(
                plan, toVersion,
                ResponseError(
                    .timeout,
                    "requests in flight to the old version did not finish within \(drainMs) ms (\(inFlight))",
                    data: ["plugin": .string(name), "timeoutMs": .int(Int64(drainMs))]))
        }
        guard supervisor.lifecycle.gate.isHeld, [.ready, .lazy, .hibernated].contains(supervisor.state) else {
            throw rollBack(plan, toVersion, .pluginUnavailable(name, "the old version ended during the upgrade"))
        }
        navigator.freeze(name)
        // The tree is still for this plugin now: what it uses is checked again (a chain may have opened a route
        // since the first check), against the app as it is now.
        let check = checkUpgrade(supervisor, to: table)
        if let refusal = check.refusal {
            throw rollBack(plan, toVersion, refusal, phase: .refused)
        }

        // 4. Every instance it owns is created in the new version, its state migrated.
        supervisor.upgradePhase(.migrating, from: plan.fromVersion, to: toVersion)
        let requests = navigator.tree.upgradeRequests(for: name, fromVersion: plan.fromVersion)
        let answers = await navigator.create(requests, in: candidate)
        var statesAfter: [InstanceID: JSONValue?] = [:]
        var statesBefore: [InstanceID: JSONValue?] = [:]
        for (request, answer) in zip(requests, answers) {
            switch answer {
            case .success(let result):
                statesBefore.updateValue(request.state, forKey: request.instance)
                statesAfter.updateValue(result.state ?? request.state, forKey: request.instance)
            case .failure(let error):
                var data = error.data?.objectValue ?? [:]
                data["instance"] = .int(request.instance.rawValue)
                throw rollBack(
                    plan, toVersion,
                    ResponseError(
                        error.code,
                        "the new version could not take over \(request.type)\(request.instance): \(error.message)",
                        data: .object(data)))
            }
        }
        guard candidate.state == .ready, supervisor.lifecycle.candidate === candidate else {
            throw rollBack(plan, toVersion, .pluginUnavailable(name, "the new version ended while it took over"))
        }

        // 5. The switch: one revision, the new version serves, the held requests go to it, the old one stops.
        let (previous, previousTable) = (supervisor.plugin, supervisor.routeTable)
        let revision = navigator.commitSwitch(
            statesAfter,
            summary:
                "plugin '\(name)' upgraded \(plan.fromVersion ?? "?") → \(toVersion): \(statesAfter.count == 1 ? "1 instance" : "\(statesAfter.count) instances") moved"
        )
        if let composition = check.composition { navigator.adopt(composition) }
        let onProbation = plan.rollback && plan.probationMs > 0
        // Published once, by the adoption: the new pid and version, both versions named.
        supervisor.lifecycle.upgrade = PluginUpgradeStatus(
            from: plan.fromVersion, to: toVersion, phase: onProbation ? .probation : .upgraded)
        supervisor.adopt(candidate, as: plan.target, table: table)
        navigator.unfreeze(name)
        let held = supervisor.releaseHold()
        let heldMicroseconds = (UVLoop.hrtime - heldAt) / 1_000
        if onProbation {
            supervisor.beginProbation(
                Probation(
                    until: loop.now + UInt64(plan.probationMs), milliseconds: plan.probationMs,
                    previous: previous, previousTable: previousTable, statesBefore: statesBefore,
                    statesAfter: statesAfter,
                    newVersion: toVersion))
        }
        logger.notice(
            "plugin '\(name)' upgraded \(plan.fromVersion ?? "?") → \(toVersion): \(requests.count) instances moved in revision \(revision), \(held) requests held for \(heldMicroseconds) µs\(onProbation ? ", on probation for \(plan.probationMs) ms" : "")"
        )
        return PluginUpgradeRequest.Result(
            plugin: name, outcome: .upgraded,
            from: PluginUpgradeRequest.Version(version: plan.fromVersion, pid: plan.fromPID),
            to: PluginUpgradeRequest.Version(version: toVersion, pid: candidate.pid), instances: requests.count,
            revision: revision, held: PluginUpgradeRequest.Held(requests: held, microseconds: heldMicroseconds),
            changes: prepared.changes,
            probation: PluginUpgradeRequest.Probation(
                milliseconds: onProbation ? plan.probationMs : 0, state: onProbation ? .running : .off))
    }

    /// A failure before the switch: the new version is stopped, the held requests go to the old one, nothing
    /// changed. Returns the error to throw.
    private func rollBack(
        _ plan: UpgradePlan, _ toVersion: String?, _ error: ResponseError,
        phase: PluginUpgradeStatus.Phase = .failed
    ) -> ResponseError {
        let supervisor = plan.supervisor
        navigator.unfreeze(supervisor.name)
        supervisor.discardCandidate()
        supervisor.releaseHold()
        supervisor.upgradePhase(phase, from: plan.fromVersion, to: toVersion)
        let failure =
            phase == .refused
            ? error : upgradeFailed(supervisor.name, "rolled back before the switch, nothing changed", error)
        logger.error("\(failure.message)")
        return failure
    }

    private func upgradeFailed(_ plugin: String, _ what: String, _ error: ResponseError) -> ResponseError {
        var data = error.data?.objectValue ?? [:]
        data["plugin"] = .string(plugin)
        data["rolledBack"] = true
        return ResponseError(
            error.code, "the upgrade of plugin '\(plugin)' failed: \(what): \(error.message)", data: .object(data))
    }
}
