import DequeModule
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem

/// The last revisions of the tree with what made each (`tree/history`, Protocol/README.md §15.4): bounded in records
/// and each record in size (``RevisionRecord/maxSteps``), so a host that runs for days keeps the same few hundred
/// kilobytes whatever its chains.
struct RevisionHistory {
    /// How many revisions are kept; older ones are forgotten.
    static let capacity = 200

    /// A deque: once full, every revision forgets the oldest, and an array's `removeFirst` moved the other 199 (a
    /// third of the memory traffic of a deep link, by callgrind).
    private(set) var records: Deque<RevisionRecord> = []

    mutating func append(_ record: RevisionRecord) {
        records.append(record)
        while records.count > Self.capacity { records.removeFirst() }
    }

    /// The kept revisions after `revision` (all of them for nil), oldest first.
    func after(_ revision: UInt64?) -> [RevisionRecord] {
        guard let revision else { return Array(records) }
        return records.filter { $0.revision > revision }
    }
}

/// What made a change, when its caller knows better than the chain itself (an action's owner answered its steps).
struct ChangeNote {
    let cause: RevisionRecord.Cause
    let summary: String
}

extension Navigator {
    /// Records the revision the tree is at now as made by `cause`.
    func recordRevision(
        _ cause: RevisionRecord.Cause, by requester: Requester? = nil, summary: String,
        steps: [NavigationStep]? = nil, touched: Set<InstanceID>? = nil
    ) {
        let by: String? =
            switch requester {
            case .control?: "control"
            case .plugin(let plugin)?: plugin
            case nil: nil
            }
        history.append(
            RevisionRecord(
                revision: tree.revision, time: TraceRecord.timestamp(milliseconds: FileSystem.millisecondsSinceEpoch),
                cause: cause, by: by, summary: summary, steps: steps, instances: touched.map { $0.sorted() }))
    }

    /// Records a committed chain: a deep link's, a user's dismissal, or a plain `navigate`, unless `note` says what
    /// it was.
    func recordChain(
        _ steps: [NavigationStep], requester: Requester, links: [Int: DeepLinkContext],
        reason: CoordinatorDismissedNotification.Reason, note: ChangeNote?, touched: Set<InstanceID>
    ) {
        let (cause, summary): (RevisionRecord.Cause, String) =
            if let note {
                (note.cause, note.summary)
            } else if let link = links.values.first {
                (.open, link.url)
            } else if reason == .user {
                (.dismissed, Self.summary(of: steps))
            } else {
                (.navigate, Self.summary(of: steps))
            }
        recordRevision(cause, by: requester, summary: summary, steps: steps, touched: touched)
    }

    /// The steps as `nav` writes them, as many as fit a record's summary (``RevisionRecord/maxSummaryCharacters``),
    /// then how many more there were: a person reads the start of a long chain, and its `steps` hold the rest.
    static func summary(of steps: [NavigationStep]) -> String {
        let budget = RevisionRecord.maxSummaryCharacters - 16  // room for " › … 256 more"
        var text = ""
        for (position, step) in steps.enumerated() {
            let part = step.summary
            if position > 0 && text.count + 3 + part.count > budget {
                return text + " › … \(steps.count - position) more"
            }
            text += position == 0 ? part : " › " + part
        }
        return text
    }
}
