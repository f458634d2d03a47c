import Synchronization

/// What the sessions found, by check: several processes run at once and one check can draw on more than one of them
/// (`stdout` on all, `unknown-members` on two), so findings are gathered here and turned into results at the end.
final class Ledger: Sendable {
    private struct Entry {
        var findings: [Finding] = []
        var notes: [String] = []
        var measurements: [(name: String, milliseconds: Double)] = []
        var ran = false
        var skipped: String?
    }

    private let entries = Mutex<[CheckID: Entry]>([:])
    let selected: Set<CheckID>

    init(selected: Set<CheckID>) { self.selected = selected }

    func wants(_ id: CheckID) -> Bool { selected.contains(id) }

    /// A finding (FAIL or WARN) for `id`.
    func add(_ id: CheckID, _ finding: Finding) {
        entries.withLock { entries in
            entries[id, default: Entry()].findings.append(finding)
            entries[id, default: Entry()].ran = true
        }
    }

    /// A line for the check's summary; marks it as run.
    func note(_ id: CheckID, _ text: String) {
        entries.withLock { entries in
            entries[id, default: Entry()].notes.append(text)
            entries[id, default: Entry()].ran = true
        }
    }

    func measure(_ id: CheckID, _ name: String, milliseconds: Double) {
        entries.withLock { entries in
            entries[id, default: Entry()].measurements.append((name, milliseconds))
            entries[id, default: Entry()].ran = true
        }
    }

    /// Marks `id` as not run, with why (kept only if nothing else ran it).
    func skip(_ id: CheckID, _ reason: String) {
        entries.withLock { entries in
            if entries[id]?.skipped == nil { entries[id, default: Entry()].skipped = reason }
        }
    }

    func skip(_ ids: [CheckID], _ reason: String) {
        for id in ids { skip(id, reason) }
    }

    /// Whether `id` has a FAIL finding.
    func failed(_ id: CheckID) -> Bool {
        entries.withLock { $0[id]?.findings.contains { $0.severity == .fail } ?? false }
    }

    /// Replaces what `ids` found with a skip: they ran in processes of their own, but what they found cannot be
    /// told apart from an earlier failure (a handshake that fails everywhere is one failure, not four).
    func supersede(_ ids: [CheckID], _ reason: String) {
        entries.withLock { entries in
            for id in ids { entries[id] = Entry(skipped: reason) }
        }
    }

    /// The results of the selected checks, in catalogue order.
    func results() -> [CheckResult] {
        entries.withLock { entries in
            CheckID.allCases.filter(selected.contains).map { id in
                let entry = entries[id] ?? Entry()
                guard entry.ran else {
                    return CheckResult(id, summary: entry.skipped ?? "not run", skipped: true)
                }
                let fails = entry.findings.filter { $0.severity == .fail }.count
                let problems = fails > 0 ? "\(fails) failure(s)" : "\(entry.findings.count) warning(s)"
                let summary =
                    entry.notes.isEmpty
                    ? (entry.findings.isEmpty ? "ok" : problems) : entry.notes.joined(separator: "; ")
                return CheckResult(id, summary: summary, findings: entry.findings, measurements: entry.measurements)
            }
        }
    }
}

/// Builds findings for one session: each carries the exchange since the step began and the plugin's last stderr.
struct Recorder {
    let session: PluginSession
    let ledger: Ledger

    func fail(_ id: CheckID, _ message: String, expected: String, since mark: Int) {
        ledger.add(
            id,
            Finding(
                .fail, message, expected: expected, exchange: session.exchange(since: mark), stderr: session.stderrTail)
        )
    }

    func warn(_ id: CheckID, _ message: String, expected: String, since mark: Int) {
        ledger.add(
            id,
            Finding(
                .warn, message, expected: expected, exchange: session.exchange(since: mark), stderr: session.stderrTail)
        )
    }

    /// Fails `id` for a request that got no usable answer (timed out, or the process ended).
    func noAnswer(_ id: CheckID, _ what: String, _ reply: Reply, since mark: Int) {
        let expected =
            switch reply {
            case .timeout:
                "an answer within requestTimeoutMs (the host kills a plugin that leaves a request unanswered, §16)"
            default: "an answer; a plugin exits only after exit or at stdin's end of file (§3, §4)"
            }
        fail(id, "\(what): \(reply.description)", expected: expected, since: mark)
    }
}
