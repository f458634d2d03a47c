import Logging
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

// The supervisor's part of an upgrade (spec §20.1): the new version started beside the old one, its adoption at
// the switch, the retired old version's end, and the probation that brings the old version back. The flow itself
// (check, hold, drain, migration, switch) is the host's: Host+Upgrade.swift.
extension PluginSupervisor {
    /// Routes a session's events: the serving session's to supervision, an upgrade's candidate's and a retired
    /// old version's to their own handling.
    func listen(to session: PluginSession) {
        session.onEvent = { [weak self, weak session] event in
            guard let self, let session else { return }
            if session === self.session {
                self.handle(event, from: session)
            } else {
                self.handleOther(event, from: session)
            }
        }
    }

    /// Starts `plugin` beside the serving version, as the upgrade's candidate; returns its session and route table
    /// once its handshake completes, or why it failed (the candidate is then gone).
    func startCandidate(
        _ plugin: ResolvedPlugin
    ) async -> Result<(session: PluginSession, table: InitializeRequest.Result), ResponseError> {
        let candidate = makeSession(for: plugin)
        lifecycle.candidate = candidate
        listen(to: candidate)
        let outcome: Result<InitializeRequest.Result, ResponseError> = await withCheckedContinuation { continuation in
            lifecycle.candidateWaiter = continuation
            candidate.start()
        }
        switch outcome {
        case .success(let table): return .success((candidate, table))
        case .failure(let error):
            retire(candidate)
            return .failure(error)
        }
    }

    /// Stops the candidate of an upgrade that did not reach its switch (the old version serves on).
    func discardCandidate() {
        guard let candidate = lifecycle.candidate else { return }
        retire(candidate)
    }

    /// A session that no longer serves (an old version after the switch, a discarded candidate) ends with the
    /// shutdown ladder; it is kept until its process has gone.
    private func retire(_ session: PluginSession) {
        if lifecycle.candidate === session { lifecycle.candidate = nil }
        guard session.state != .terminated else { return }
        if !lifecycle.retired.contains(where: { $0 === session }) { lifecycle.retired.append(session) }
        session.stop(graceMs: lifecycle.graceMs)
    }

    private func handleOther(_ event: PluginSession.Event, from session: PluginSession) {
        switch event {
        case .ready(let table) where session === lifecycle.candidate:
            lifecycle.candidateWaiter?.resume(returning: .success(table))
            lifecycle.candidateWaiter = nil
        case .handshakeFailed(let error) where session === lifecycle.candidate:
            lifecycle.candidateWaiter?.resume(returning: .failure(error))
            lifecycle.candidateWaiter = nil
        case .request(let id, let method, _):
            // Not the serving version (yet, or any more): what it asks of the tree is not its to ask.
            session.respond(
                to: id,
                error: .pluginUnavailable(
                    name,
                    "this process of it does not serve (\(session === lifecycle.candidate ? "an upgrade is moving its instances" : "it was replaced")): '\(method)' refused"
                ))
        case .terminated(let termination):
            if session.pid > 0 { guardian?.release(processGroup: session.pid) }
            if session === lifecycle.candidate {
                lifecycle.candidate = nil
                lifecycle.candidateWaiter?.resume(
                    returning: .failure(.pluginUnavailable(name, "the new version \(termination)")))
                lifecycle.candidateWaiter = nil
            }
            lifecycle.retired.removeAll { $0 === session }
            lifecycle.onProcessGone(self)
        case .ready, .handshakeFailed, .notification, .violation, .requestTimedOut:
            break
        }
    }

    // MARK: - The switch

    /// The point of no return: the candidate becomes the serving session (a new incarnation, its route table the
    /// plugin's), and the old version is retired with the shutdown ladder. The gate stays as it is: the caller
    /// opens it once the tree and the composition have switched too.
    func adopt(_ candidate: PluginSession, as plugin: ResolvedPlugin, table: InitializeRequest.Result) {
        let old = session
        lifecycle.candidate = nil
        self.plugin = plugin
        session = candidate
        incarnation += 1
        routeTable = table
        everReady = true
        lifecycle.tableFromContract = false
        lastError = nil
        if let old, old !== candidate { retire(old) }
        if state == .ready { lifecycle.onPublish(self) } else { setState(.ready) }
    }

    /// Opens the gate an upgrade held; the requests that waited go to the serving session. Returns how many waited.
    @discardableResult
    func releaseHold() -> Int {
        let held = lifecycle.gate.heldCount
        lifecycle.gate.open()
        settleWaiters()
        return held
    }

    /// Records the upgrade's phase for status, and tells the host's observers (`plugin/changed`).
    func upgradePhase(_ phase: PluginUpgradeStatus.Phase, from: String?, to: String?) {
        lifecycle.upgrade = PluginUpgradeStatus(from: from, to: to, phase: phase)
        lifecycle.onPublish(self)
    }

    // MARK: - Probation

    /// Arms the probation: until it ends, an abnormal end of the new version brings `probation.previous` back.
    func beginProbation(_ probation: Probation) {
        var armed = probation
        // The loop's time is the start of this iteration's: a long one would end the probation early.
        loop.updateTime()
        let timer = try? UVTimer(loop: loop)
        try? timer?.start(after: UInt64(probation.milliseconds)) { [weak self] in self?.endProbation(failure: nil) }
        armed.timer = timer
        lifecycle.probation = armed
    }

    /// Waits for the end of the running probation: nil once passed, else why it failed (answered once the old
    /// version serves again, or could not).
    func probationOutcome() async -> String? {
        // Decided where the waiter is registered: the probation may end between a check and the registration.
        await withCheckedContinuation { continuation in
            if lifecycle.probation != nil {
                lifecycle.probation?.waiters.append(continuation)
            } else if lifecycle.rollingBack != nil {
                lifecycle.rollingBack?.waiters.append(continuation)
            } else {
                continuation.resume(
                    returning: lifecycle.upgrade?.phase == .rolledBack ? lifecycle.rollbackReason : nil)
            }
        }
    }

    /// The old version serves again after a failed probation (or could not be brought back): whoever waited for the
    /// probation hears why it failed.
    func finishRollback() {
        guard let rollback = lifecycle.rollingBack else { return }
        lifecycle.rollingBack = nil
        for waiter in rollback.waiters { waiter.resume(returning: lifecycle.rollbackReason ?? "rolled back") }
    }

    /// The probation ends: passed (`failure` nil), or failed with why (the old version is being brought back).
    func endProbation(failure: String?) {
        guard let probation = lifecycle.probation else { return }
        lifecycle.probation = nil
        probation.timer?.close()
        if failure == nil {
            let upgrade = lifecycle.upgrade
            logger.notice("plugin '\(name)' \(upgrade?.to ?? "?") passed its probation of \(probation.milliseconds) ms")
            upgradePhase(.upgraded, from: upgrade?.from, to: upgrade?.to)
        }
        for waiter in probation.waiters { waiter.resume(returning: failure) }
    }

    /// On an abnormal end within the probation: starts the old version again (the host restores its instances
    /// from the tree when it is ready, seeing ``LifecycleState/rollingBack``) and returns true; else false
    /// (supervision as usual).
    func rollBackIfOnProbation(after termination: PluginTermination) -> Bool {
        guard let probation = lifecycle.probation, termination.isAbnormal, loop.now < probation.until else {
            return false
        }
        let reason = "the new version \(probation.newVersion ?? "?") \(termination) within its probation"
        logger.warning("plugin '\(name)': \(reason); rolling back to \(probation.previousTable?.plugin.version ?? "?")")
        probation.timer?.close()
        lifecycle.probation = nil
        lifecycle.rollbackReason = reason
        lifecycle.rollingBack = probation
        plugin = probation.previous
        routeTable = probation.previousTable
        restarts += 1
        upgradePhase(.rolledBack, from: lifecycle.upgrade?.from, to: lifecycle.upgrade?.to)
        setState(.restarting)
        start()
        return true
    }
}
