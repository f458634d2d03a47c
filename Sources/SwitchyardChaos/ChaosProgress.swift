import SwitchyardHost
import Synchronization

/// Where a running experiment is, for a progress line: time elapsed of the load's total, operations invoked, those
/// that failed (a typed error) or were lost, and the faults in force.
public struct ChaosProgress: Sendable, Equatable {
    public var elapsedMs: Double
    public var totalMs: Int
    public var operations: Int
    public var failed: Int
    public var lost: Int
    /// The faults in force, as `kind target` (`stop todos`): injected, and neither healed by the experiment nor,
    /// for one the host heals, with its targets ready again.
    public var activeFaults: [String]

    public init(elapsedMs: Double, totalMs: Int, operations: Int, failed: Int, lost: Int, activeFaults: [String]) {
        self.elapsedMs = elapsedMs
        self.totalMs = totalMs
        self.operations = operations
        self.failed = failed
        self.lost = lost
        self.activeFaults = activeFaults
    }

    /// One line for a terminal: `chaos  12.0 s / 60 s  2403 operations, 31 failed, 0 lost  faults: stop todos`.
    public var line: String {
        let seconds = String(format1: elapsedMs / 1_000, digits: 1)
        let total = String(format1: Double(totalMs) / 1_000, digits: 0)
        let faults = activeFaults.isEmpty ? "no fault active" : "faults: " + activeFaults.joined(separator: ", ")
        return "chaos  \(seconds) s / \(total) s  \(operations) operations, \(failed) failed, \(lost) lost  \(faults)"
    }
}

extension ChaosExperiment {
    /// Calls `report` every `interval` until cancelled (the load's end).
    func reportProgress(every interval: Duration, _ report: @Sendable (ChaosProgress) -> Void) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            report(currentProgress())
        }
    }

    func currentProgress() -> ChaosProgress {
        let now = ContinuousClock.now
        return state.withLock { state in
            let elapsed = elapsed(now, in: state)
            var failed = 0
            var lost = 0
            for event in state.history.events {
                if event.type == .fail { failed += 1 }
                if event.type == .info { lost += 1 }
            }
            let healed = Set(state.history.events.filter { $0.type == .heal }.compactMap(\.fault))
            let injected = state.history.events.filter { $0.type == .fault }
            let active = schedule.filter { fault in
                guard let at = injected.first(where: { $0.fault == fault.index })?.time, !healed.contains(fault.index)
                else { return false }
                // One the host heals is over once each target went down and came back (a stop is only seen down at
                // the heartbeat's verdict, seconds later).
                return fault.healMs != nil || !fault.plugins.allSatisfy { recovered($0, since: at, in: state.history) }
            }
            return ChaosProgress(
                elapsedMs: min(elapsed, Double(spec.durationMs)), totalMs: spec.durationMs, operations: state.nextOp,
                failed: failed, lost: lost,
                activeFaults: active.map { "\($0.kind.rawValue) \($0.plugins.joined(separator: ","))" })
        }
    }

    private func recovered(_ plugin: String, since time: Double, in history: History) -> Bool {
        var down = false
        for event in history.events where event.type == .plugin && event.plugin == plugin && event.time >= time {
            if event.state != "ready" { down = true } else if down { return true }
        }
        return false
    }
}
