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
    /// all is a lost request.
    public static func lost(_ history: History) -> CheckerResult {
        var violations: [String] = []
        var counts: [HistoryEvent.Kind: Int] = [:]
        for operation in history.operations {
            guard let completion = operation.completion else {
                violations.append("op \(operation.invoke.op ?? -1) (\(operation.invoke.f ?? "?")) never completed")
                continue
            }
            counts[completion.type, default: 0] += 1
            if completion.type == .info {
                violations.append(
                    "op \(completion.op ?? -1) (\(operation.invoke.f ?? "?")) lost: \(completion.error ?? "no answer")")
            }
        }
        let summary =
            "\(history.operations.count) operations: \(counts[.ok] ?? 0) ok, \(counts[.fail] ?? 0) failed with a typed error, \(violations.count) lost"
        return CheckerResult(checker: .lost, violations: violations, summary: summary)
    }

    /// Revisions strictly increase in the published `tree` events, every acknowledged change is among them, and each
    /// client's acknowledged revisions never go back (a client that saw revision r never sees an older tree).
    public static func revisions(_ history: History) -> CheckerResult {
        var violations: [String] = []
        var published = Set<UInt64>()
        var last: UInt64?
        for event in history.events where event.type == .tree {
            guard let revision = event.revision else { continue }
            if let last, revision <= last {
                violations.append("revision \(revision) published after \(last)")
            }
            last = max(last ?? 0, revision)
            published.insert(revision)
        }
        let first = history.events.first { $0.type == .tree }?.revision ?? 0
        var perClient: [Int: (revision: UInt64, op: Int)] = [:]
        var acknowledged = 0
        for operation in history.operations {
            guard let done = operation.completion, done.type == .ok, let revision = done.revision else { continue }
            acknowledged += 1
            let op = done.op ?? -1
            if revision > first, !published.contains(revision) {
                violations.append("op \(op) acknowledged revision \(revision), which no tree/changed published")
            }
            if let client = done.client ?? operation.invoke.client {
                if let seen = perClient[client], revision < seen.revision {
                    violations.append(
                        "client \(client): op \(op) answered revision \(revision) after op \(seen.op) answered \(seen.revision)"
                    )
                }
                perClient[client] = (max(perClient[client]?.revision ?? 0, revision), op)
            }
        }
        let summary =
            "\(published.count) revisions published (\(first)…\(last ?? first)), \(acknowledged) acknowledged, in order"
        return CheckerResult(checker: .revisions, violations: violations, summary: summary)
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
            let heal =
                history.events.first { $0.type == .heal && $0.fault == fault.fault }?.time
                ?? history.events.first { event in
                    event.type == .plugin && event.time > start && event.state == "ready"
                        && (fault.plugins ?? []).contains(event.plugin ?? "")
                }?.time ?? start + 1_000
            let window = max(heal - start, 1_000)
            lines.append(
                "fault \(fault.fault ?? -1) \(fault.kind ?? "?") \((fault.plugins ?? []).joined(separator: ",")): before \(figures(start - window, start)), during \(figures(start, heal)), after \(figures(heal, heal + window))"
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
