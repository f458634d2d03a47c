import SwitchyardProtocol

/// What one checker found in a history: its violations (none: it passed) and a line of figures.
public struct CheckerResult: Sendable, Equatable {
    public let checker: ExperimentSpec.Checker
    /// Each violation in words, with the operation, revision or plugin it is about.
    public let violations: [String]
    public let summary: String

    public var passed: Bool { violations.isEmpty }
}

/// The checkers over a history (Protocol/README.md §22.3): pure functions, so a history written by one run (or by
/// hand, in tests) is checked the same way. The model checker is ``VictimModel/check(_:)``.
public enum HistoryCheckers {
    /// No request lost: every invocation got `ok` or `fail`; an `info` (no answer within the deadline) or none at
    /// all is a lost request. An `info` whose cause is `hostKilled` was in flight when the experiment killed the host:
    /// no host was left to answer it, so it is indeterminate, counted apart, not lost.
    public static func lost(_ history: History) -> CheckerResult {
        var violations: [String] = []
        var counts: [HistoryEvent.Kind: Int] = [:]
        var indeterminate = 0
        for operation in history.operations {
            guard let completion = operation.completion else {
                violations.append("op \(operation.invoke.op ?? -1) (\(operation.invoke.f ?? "?")) never completed")
                continue
            }
            counts[completion.type, default: 0] += 1
            if completion.type == .info, completion.cause == "hostKilled" {
                indeterminate += 1
            } else if completion.type == .info {
                violations.append(
                    "op \(completion.op ?? -1) (\(operation.invoke.f ?? "?")) lost: \(completion.error ?? "no answer")")
            }
        }
        let summary =
            "\(history.operations.count) operations: \(counts[.ok] ?? 0) ok, \(counts[.fail] ?? 0) failed with a typed error, \(violations.count) lost"
            + (indeterminate > 0 ? ", \(indeterminate) in flight at a host kill (indeterminate)" : "")
        return CheckerResult(checker: .lost, violations: violations, summary: summary)
    }

    /// Revisions strictly increase in the published `tree` events, every acknowledged change is among them, and each
    /// client's acknowledged revisions never go back (a client that saw revision r never sees an older tree).
    ///
    /// A host the experiment killed and started again begins an epoch (`host` `restarted`): it may restore a
    /// revision older than the last one published (§17's bound is the host checker's), so each epoch is checked on
    /// its own, from the revision the new host served first.
    public static func revisions(_ history: History) -> CheckerResult {
        var violations: [String] = []
        var published: [Set<UInt64>] = [[]]
        var last: UInt64?
        var epochOfOp: [Int: Int] = [:]
        var firsts: [UInt64] = [history.events.first { $0.type == .tree }?.revision ?? 0]
        for event in history.events {
            switch event.type {
            case .host where event.state == "restarted":
                published.append([])
                last = event.served
                firsts.append(event.served ?? 0)
                if let served = event.served { published[published.count - 1].insert(served) }
            case .tree:
                guard let revision = event.revision else { continue }
                if let last, revision <= last {
                    violations.append("revision \(revision) published after \(last)")
                }
                last = max(last ?? 0, revision)
                published[published.count - 1].insert(revision)
            case .invoke:
                if let op = event.op { epochOfOp[op] = published.count - 1 }
            default: break
            }
        }
        var perClient: [Int: (revision: UInt64, op: Int, epoch: Int)] = [:]
        var acknowledged = 0
        for operation in history.operations {
            guard let done = operation.completion, done.type == .ok, let revision = done.revision else { continue }
            acknowledged += 1
            let op = done.op ?? -1
            let epoch = epochOfOp[op] ?? 0
            if revision > firsts[epoch], !published[epoch].contains(revision) {
                violations.append("op \(op) acknowledged revision \(revision), which no tree/changed published")
            }
            if let client = done.client ?? operation.invoke.client {
                if let seen = perClient[client], seen.epoch == epoch, revision < seen.revision {
                    violations.append(
                        "client \(client): op \(op) answered revision \(revision) after op \(seen.op) answered \(seen.revision)"
                    )
                }
                let kept = perClient[client].flatMap { $0.epoch == epoch ? $0.revision : nil } ?? 0
                perClient[client] = (max(kept, revision), op, epoch)
            }
        }
        let count = published.map(\.count).reduce(0, +)
        let summary =
            "\(count) revisions published (\(firsts[0])…\(last ?? firsts[0])), \(acknowledged) acknowledged, in order"
            + (published.count > 1 ? " within each of \(published.count) host lifetimes" : "")
        return CheckerResult(checker: .revisions, violations: violations, summary: summary)
    }

    /// The host's own faults (§22.3): after each kill, the state file the next host restored holds a tree the host
    /// published (exactly, availability aside) and no older than the revision it had said was written just before
    /// the kill (§17), and the host started again; under each full disk the host said its state file could not be
    /// written, went on serving (an `ok` within the fault), and said it was written again after the healing step;
    /// and the host never exited on its own.
    public static func host(_ history: History) -> CheckerResult {
        var violations: [String] = []
        var kills = 0
        var disks = 0
        let events = history.events
        for fault in events where fault.type == .fault {
            guard let index = fault.fault else { continue }
            let own = events.filter { $0.type == .host && $0.fault == index }
            switch fault.kind {
            case "hostKill":
                kills += 1
                let killed = own.first { $0.state == "killed" }
                guard let restarted = own.first(where: { $0.state == "restarted" }) else {
                    let why = own.first { $0.state == "restartFailed" }?.reason.map { ": \($0)" } ?? ""
                    violations.append("fault \(index) (hostKill): the host was not started again\(why)")
                    continue
                }
                if let reason = restarted.reason { violations.append("fault \(index) (hostKill): \(reason)") }
                if let written = killed?.written, let restored = restarted.revision, restored < written {
                    violations.append(
                        "fault \(index) (hostKill): the state file held revision \(restored), older than revision \(written) the host had said was written"
                    )
                }
            case "diskFull":
                disks += 1
                guard let failing = own.first(where: { $0.state == "stateFileFailing" }) else {
                    violations.append(
                        "fault \(index) (diskFull): the host never said its state file could not be written")
                    continue
                }
                let heal = events.first { $0.type == .heal && $0.fault == index }?.time ?? .infinity
                let served = history.operations.contains { operation in
                    guard let done = operation.completion, done.type == .ok else { return false }
                    return operation.invoke.time >= fault.time && done.time <= heal
                }
                if !served {
                    violations.append("fault \(index) (diskFull): no request was served while the disk was full")
                }
                if !own.contains(where: { $0.state == "stateFileWritten" && $0.time > failing.time }) {
                    violations.append(
                        "fault \(index) (diskFull): the host never said its state file was written again after the disk had room"
                    )
                }
            default: break
            }
        }
        for exited in events where exited.type == .host && exited.state == "exited" {
            violations.append("the host stopped without being killed: \(exited.reason ?? "?")")
        }
        let summary =
            kills + disks == 0
            ? "no host faults"
            : "\(kills) host kill(s) restored within the state file's bound, \(disks) full disk(s) served through and reported"
        return CheckerResult(
            checker: .host, violations: violations,
            summary: violations.isEmpty ? summary : "host faults: \(violations.count) problem(s)")
    }

    /// No plugin that was not a fault's target left `ready` (hung, quarantined, killed, restarted, failed).
    public static func verdicts(_ history: History) -> CheckerResult {
        let targets = Set(history.events.filter { $0.type == .fault }.flatMap { $0.plugins ?? [] })
        var violations: [String] = []
        var verdicts: [String: Int] = [:]
        for event in history.events where event.type == .plugin {
            guard let plugin = event.plugin, let state = event.state, state != "ready" else { continue }
            verdicts[plugin, default: 0] += 1
            if !targets.contains(plugin) {
                violations.append(
                    "plugin '\(plugin)', never a fault's target, went \(state) at \(Int(event.time)) ms")
            }
        }
        let summary =
            "faults hit \(targets.isEmpty ? "none" : targets.sorted().joined(separator: ", ")); state changes away from ready: "
            + (verdicts.isEmpty
                ? "none" : verdicts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        return CheckerResult(checker: .verdicts, violations: violations, summary: summary)
    }

    /// Answer latency (p50 / p99 of the `ok` operations) before, during and after each fault: `during` runs from
    /// the fault to its healing step (for a fault the host heals, to its target ready again), `before` and `after`
    /// are windows as long as `during` (at least a second). Figures only: latency is the machine's, never a verdict.
    public static func latency(_ history: History) -> CheckerResult {
        let operations = history.operations
        func figures(_ from: Double, _ to: Double) -> String {
            let values = operations.filter { $0.invoke.time >= from && $0.invoke.time < to }.compactMap(\.latency)
            return
                "\(ChaosReport.format(ChaosReport.percentile(values, 0.5))) / \(ChaosReport.format(ChaosReport.percentile(values, 0.99))) (\(values.count))"
        }
        var lines: [String] = ["all " + figures(-Double.infinity, Double.infinity)]
        for fault in history.events where fault.type == .fault {
            let start = fault.time
            // A host kill is over when the new host serves, not when the experiment starts it again.
            let heal =
                history.events.first { $0.type == .host && $0.state == "restarted" && $0.fault == fault.fault }?.time
                ?? history.events.first { $0.type == .heal && $0.fault == fault.fault }?.time
                ?? history.events.first { event in
                    event.type == .plugin && event.time > start && event.state == "ready"
                        && (fault.plugins ?? []).contains(event.plugin ?? "")
                }?.time ?? start + 1_000
            let window = max(heal - start, 1_000)
            lines.append(
                "fault \(fault.fault ?? -1) \(fault.kind ?? "?") \(fault.plugins.flatMap { $0.isEmpty ? nil : $0.joined(separator: ",") } ?? "host"): before \(figures(start - window, start)), during \(figures(start, heal)), after \(figures(heal, heal + window))"
            )
        }
        return CheckerResult(checker: .latency, violations: [], summary: lines.joined(separator: "\n      "))
    }
}

extension HistoryCheckers {
    /// A checker a saved history alone cannot run, and why.
    public struct Skipped: Sendable, Equatable {
        public let checker: ExperimentSpec.Checker
        public let reason: String
    }

    /// Runs on a saved history (`switchyard chaos --check`) every checker of `checkers` that needs nothing else; the
    /// others are skipped with the reason. The model checker needs the victim's route table, which its plugin
    /// declares when the app starts: it runs only in a live experiment.
    public static func checkSaved(
        _ history: History, checkers: [ExperimentSpec.Checker] = ExperimentSpec.Checker.allCases
    ) -> (results: [CheckerResult], skipped: [Skipped]) {
        var results: [CheckerResult] = []
        var skipped: [Skipped] = []
        for checker in checkers {
            switch checker {
            case .lost: results.append(lost(history))
            case .revisions: results.append(revisions(history))
            case .verdicts: results.append(verdicts(history))
            case .latency: results.append(latency(history))
            case .host: results.append(host(history))
            case .model:
                skipped.append(
                    Skipped(
                        checker: .model,
                        reason:
                            "needs the live app: the victim's route table, which its plugin declares at start-up (run the experiment again to check it)"
                    ))
            }
        }
        return (results, skipped)
    }
}
