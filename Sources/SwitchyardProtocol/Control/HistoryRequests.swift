/// `tree/history` (client → host): the host's recent revisions, each with what made it (Protocol/README.md §15.4), so a
/// client that connects late or reconnects (a reloaded Studio page) sees how the tree came to be as it is.
public enum TreeHistoryRequest: ControlRequest {
    public static let method = "tree/history"

    public struct Params: Codable, Sendable, Equatable {
        /// Only the revisions after this one; absent: every revision the host keeps.
        public var after: UInt64?
        public init(after: UInt64? = nil) { self.after = after }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// Oldest first; at most ``capacity``, the newest ones.
        public var revisions: [RevisionRecord]
        /// How many revisions the host keeps (older ones are forgotten).
        public var capacity: Int

        public init(revisions: [RevisionRecord], capacity: Int) {
            self.revisions = revisions
            self.capacity = capacity
        }
    }
}

/// One revision of the tree and what made it.
public struct RevisionRecord: Codable, Sendable, Equatable {
    /// What kind of request made the revision.
    public enum Cause: String, Codable, Sendable, CaseIterable {
        /// A `navigate` chain (a control client's, or a plugin's own).
        case navigate
        /// A deep link (`open`).
        case open
        /// A screen action (`user/action`): the owner's answer, applied as a chain.
        case action
        /// The user dismissed an entry (`user/dismissed`).
        case dismissed
        /// The app started: the root and its initial content were created.
        case start
        /// The tree was read from the state file (§17), or repaired after it (content the tables declare since).
        case restore
        /// Placeholders created once their plugin serves (§11).
        case placeholders
        /// A plugin's instances moved to its new version, or back to the old one after a failed probation (§20.1).
        case upgrade
    }

    public var revision: UInt64
    /// UTC, ISO 8601 with milliseconds, when the host committed it.
    public var time: String
    public var cause: Cause
    /// Who asked: `control` (a control client) or a plugin's name (its own `navigate`, or the owner whose answer to
    /// an action was applied); absent for what the host did itself.
    public var by: String?
    /// A line for people: the steps, the deep link, the action and its entry.
    public var summary: String
    /// The chain that was applied, when the revision is one (for `open`, the resolved chain): its first steps, at
    /// most ``RevisionRecord/maxSteps``.
    public var steps: [NavigationStep]?
    /// How many of the chain's steps after ``steps`` the record leaves out; absent when it keeps them all.
    public var stepsOmitted: Int?
    /// The instances the change touched (everything it changed is among them), when known: the lowest ids, at most
    /// ``RevisionRecord/maxInstances``.
    public var instances: [InstanceID]?
    /// How many touched instances after ``instances`` the record leaves out; absent when it keeps them all.
    public var instancesOmitted: Int?

    /// The most steps a record keeps. The host keeps its last 200 records whatever their chains' length, so a
    /// record is bounded too: a host that builds a 200-step chain a hundred times would otherwise hold every step of
    /// every one (about 5 MiB at 10,000 instances, a quarter of such a host's heap).
    public static let maxSteps = 16
    /// The most touched instances a record keeps (a restore touches every instance of the tree).
    public static let maxInstances = 32
    /// The longest summary a record keeps, in characters (code points); a longer one ends in "…".
    public static let maxSummaryCharacters = 240

    public init(
        revision: UInt64, time: String, cause: Cause, by: String? = nil, summary: String,
        steps: [NavigationStep]? = nil, instances: [InstanceID]? = nil
    ) {
        self.revision = revision
        self.time = time
        self.cause = cause
        self.by = by
        // Counted in code points, as the schema's maxLength counts.
        let scalars = summary.unicodeScalars
        self.summary =
            scalars.count > Self.maxSummaryCharacters
            ? String(String.UnicodeScalarView(scalars.prefix(Self.maxSummaryCharacters - 1))) + "…" : summary
        if let steps, steps.count > Self.maxSteps {
            self.steps = Array(steps.prefix(Self.maxSteps))
            stepsOmitted = steps.count - Self.maxSteps
        } else {
            self.steps = steps
        }
        if let instances, instances.count > Self.maxInstances {
            self.instances = Array(instances.prefix(Self.maxInstances))
            instancesOmitted = instances.count - Self.maxInstances
        } else {
            self.instances = instances
        }
    }
}
