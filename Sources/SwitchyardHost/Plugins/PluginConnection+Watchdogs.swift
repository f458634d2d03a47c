import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardUV

// The verdicts that time makes: the heartbeat and the write queue. Each timer only wakes the loop; the verdict
// is given after the next poll, on the running clock (spec §6.1).
extension PluginConnection {
    // MARK: - Heartbeat

    /// Pings the plugin when it has been silent for `heartbeatIntervalMs`; a ping unanswered for
    /// `heartbeatTimeoutMs` means it is hung (stopped, deadlocked, spinning) and it is killed like a crash.
    func startHeartbeat() {
        heartbeat = HeartbeatPolicy(
            intervalMs: plugin.limits.heartbeatIntervalMs, timeoutMs: plugin.limits.heartbeatTimeoutMs, now: loop.activeNow)
        guard heartbeat.isEnabled, let timer = try? UVTimer(loop: loop) else { return }
        heartbeatTimer = timer
        try? timer.start(after: heartbeat.tickMs, repeatEvery: heartbeat.tickMs) { [weak self] in
            // Judged after the next poll, on the running clock, like every other deadline.
            guard let self, !self.heartbeatJudgementPending else { return }
            self.heartbeatJudgementPending = true
            self.loop.afterNextPoll { [weak self] in self?.heartbeatTick() }
        }
    }

    func heartbeatTick() {
        heartbeatJudgementPending = false
        guard state == .ready else { return }
        switch heartbeat.tick(now: loop.activeNow) {
        case .none:
            break
        case .ping(let id):
            _ = write(.request(id: .string(id), method: PingRequest.method, params: .object(JSONObject())))
        case .hung:
            kill(reason: "hung: no answer to the heartbeat $/ping within \(plugin.limits.heartbeatTimeoutMs) ms of running time")
        }
    }


    // MARK: - Write stall
    //
    // A full write queue is evidence only if it stays full: a healthy plugin on a starved machine reads slowly but
    // it reads. The verdict "stopped reading" needs `heartbeatTimeoutMs` of running time in which the queue did not
    // shrink at all.

    func beginWriteStall() {
        logger.warning(
            "plugin '\(name)' stopped reading its stdin (\(queuedBytes) bytes queued, limit \(plugin.maxWriteQueueBytes)): requests are refused; it is killed unless it reads within \(writeQueue.windowMs) ms")
        if writeStallTimer == nil { writeStallTimer = try? UVTimer(loop: loop) }
        armWriteStallCheck(after: writeQueue.windowMs)
    }

    func armWriteStallCheck(after milliseconds: UInt64) {
        try? writeStallTimer?.start(after: milliseconds) { [weak self] in
            self?.loop.afterNextPoll { [weak self] in self?.judgeWriteStall() }
        }
    }

    func judgeWriteStall() {
        guard state != .terminated else { return }
        let queued = queuedBytes
        switch writeQueue.judge(queued: queued, now: loop.activeNow) {
        case .recovered:
            logger.notice("plugin '\(name)' reads its stdin again (\(queued) bytes queued)")
        case .checkAgain(let milliseconds):
            armWriteStallCheck(after: milliseconds)
        case .notReading(let milliseconds):
            kill(reason: "stopped reading its stdin (\(queued) bytes queued, limit \(plugin.maxWriteQueueBytes), nothing read for \(milliseconds) ms)")
        }
    }

    /// Bytes queued towards the plugin that it has not read yet.
    var queuedBytes: Int { process?.stdin?.queuedBytes ?? 0 }
}
