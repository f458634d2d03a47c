// Modules replaced while the app runs (Protocol/README.md §20): a new version of a plugin taking over from the
// running one, and the manifest read again.

/// `plugin/upgrade` (client → host): a new version of a running plugin takes over from the old one without a
/// restart of the app. The new version starts beside the old one and completes its handshake; its route table must
/// still support everything the tree uses of the plugin and everything the other modules reference, else the upgrade
/// is refused (`-32017 compositionError`, each finding named) and the old version went on serving. Then the old
/// version's new requests are held, its requests in flight finish, every instance it owns is created in the new one
/// (`coordinator/create`, reason `upgrade`, its state migrated) and the tree's nodes move over in one revision. A
/// failure before that point rolls back (nothing changed; the error says what failed); a crash of the new version
/// within the probation brings the old one back.
public enum PluginUpgradeRequest: ControlRequest {
    public static let method = "plugin/upgrade"

    public struct Params: Codable, Sendable, Equatable {
        /// The plugin's name in the manifest.
        public var plugin: String
        /// The new version's argv, as a manifest entry's `command` (relative paths from the manifest's folder).
        /// Absent with `product` absent too: the entry's own command, started again (a new build at the same path).
        public var command: [String]?
        /// The new version as a Swift product of this package, as a manifest entry's `product`.
        public var product: String?
        /// Arguments appended to `command` or `product`, as a manifest entry's `args`.
        public var args: [String]?
        /// How long after the switch a crash of the new version brings the old one back (default 10,000; 0: none).
        public var probationMs: Int?
        /// A crash within the probation restarts the new version under its restart policy instead.
        public var noRollback: Bool?
        /// Answer once the probation is over (passed, or rolled back) instead of at the switch.
        public var waitForProbation: Bool?

        public init(
            plugin: String, command: [String]? = nil, product: String? = nil, args: [String]? = nil,
            probationMs: Int? = nil, noRollback: Bool? = nil, waitForProbation: Bool? = nil
        ) {
            self.plugin = plugin
            self.command = command
            self.product = product
            self.args = args
            self.probationMs = probationMs
            self.noRollback = noRollback
            self.waitForProbation = waitForProbation
        }
    }

    /// One version of the plugin: what its `initialize` reported, and its process.
    public struct Version: Codable, Sendable, Equatable {
        public var version: String?
        public var pid: Int32?

        public init(version: String?, pid: Int32?) {
            self.version = version
            self.pid = pid
        }
    }

    /// How the upgrade ended.
    public enum Outcome: String, Codable, Sendable {
        /// The new version serves (its probation may still be running: see ``Probation``).
        case upgraded
        /// The new version crashed within its probation and the old one serves again, restored from the tree.
        case rolledBack
    }

    /// The requests that waited while the instances moved over.
    public struct Held: Codable, Sendable, Equatable {
        /// How many requests waited.
        public var requests: Int
        /// How long the old version took no new request (from the hold to the switch), in microseconds.
        public var microseconds: UInt64

        public init(requests: Int, microseconds: UInt64) {
            self.requests = requests
            self.microseconds = microseconds
        }
    }

    /// The probation after the switch.
    public struct Probation: Codable, Sendable, Equatable {
        public enum State: String, Codable, Sendable {
            /// Still running: a crash now brings the old version back.
            case running
            /// Over without a crash.
            case passed
            /// The new version crashed within it.
            case failed
            /// None was asked for (`probationMs` 0, or `noRollback`).
            case off
        }

        public var milliseconds: Int
        public var state: State

        public init(milliseconds: Int, state: State) {
            self.milliseconds = milliseconds
            self.state = state
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var plugin: String
        public var outcome: Outcome
        /// The version that served before.
        public var from: Version
        /// The version that took over.
        public var to: Version
        /// Instances created in the new version (reason `upgrade`).
        public var instances: Int
        /// The revision in which the tree's nodes moved to the new version.
        public var revision: UInt64
        public var held: Held
        /// How the new version's route contract differs from the old one's (§19.3): what it added, and the breaking
        /// changes nothing in the running app uses.
        public var changes: [ContractChange]
        public var probation: Probation
        /// With `rolledBack`: why.
        public var reason: String?

        public init(
            plugin: String, outcome: Outcome, from: Version, to: Version, instances: Int, revision: UInt64,
            held: Held, changes: [ContractChange], probation: Probation, reason: String? = nil
        ) {
            self.plugin = plugin
            self.outcome = outcome
            self.from = from
            self.to = to
            self.instances = instances
            self.revision = revision
            self.held = held
            self.changes = changes
            self.probation = probation
            self.reason = reason
        }
    }
}

/// One difference between two versions of a route contract, classified by a rule of Protocol/README.md §19.3.
public struct ContractChange: Codable, Sendable, Equatable {
    /// The rule's name (`ROUTE_ADDED`, `PARAM_REMOVED`, …).
    public var rule: String
    /// Whether the rule is breaking.
    public var breaking: Bool
    /// The JSON pointer into the contract (`/types/todos/routes/history`).
    public var pointer: String
    public var message: String

    public init(rule: String, breaking: Bool, pointer: String, message: String) {
        self.rule = rule
        self.breaking = breaking
        self.pointer = pointer
        self.message = message
    }
}

/// `host/reload` (client → host; also `SIGHUP`): reads the manifest the host was started with again and applies
/// what changed, synchronously. A manifest with any error is refused whole (`-32602`, every problem as
/// `file:line:column`), and so is a change whose composition would not hold (`-32017`); nothing changes then.
/// Added plugins start and join; removed ones leave once none of their instances is in the tree (else `-32011`
/// naming them, unless `force`, which dismisses them first); changed entries are upgraded as by `plugin/upgrade`.
public enum HostReloadRequest: ControlRequest {
    public static let method = "host/reload"

    public struct Params: Codable, Sendable, Equatable {
        /// Dismiss the instances of removed plugins first (as `dismissCoordinator` would) instead of refusing.
        public var force: Bool?

        public init(force: Bool? = nil) { self.force = force }
    }

    /// A plugin whose change could not be applied (its upgrade rolled back), with why.
    public struct Failure: Codable, Sendable, Equatable {
        public var plugin: String
        public var error: ResponseError

        public init(plugin: String, error: ResponseError) {
            self.plugin = plugin
            self.error = error
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// The manifest read.
        public var manifest: String
        /// Plugins started, as they serve now.
        public var added: [HostStatusRequest.Plugin]
        /// Plugins stopped and gone from the app.
        public var removed: [String]
        /// Instances dismissed first because their plugin was removed (`force`).
        public var dismissed: [InstanceID]
        /// Changed entries whose new version took over.
        public var upgraded: [PluginUpgradeRequest.Result]
        /// Changed entries applied without a new process (restart policy, start mode, hibernation, contract).
        public var reconfigured: [String]
        /// Changed entries whose upgrade failed (each rolled back: the old version serves).
        public var failed: [Failure]
        /// Entries that did not change.
        public var unchanged: [String]

        public init(
            manifest: String, added: [HostStatusRequest.Plugin] = [], removed: [String] = [],
            dismissed: [InstanceID] = [], upgraded: [PluginUpgradeRequest.Result] = [], reconfigured: [String] = [],
            failed: [Failure] = [], unchanged: [String] = []
        ) {
            self.manifest = manifest
            self.added = added
            self.removed = removed
            self.dismissed = dismissed
            self.upgraded = upgraded
            self.reconfigured = reconfigured
            self.failed = failed
            self.unchanged = unchanged
        }
    }
}
