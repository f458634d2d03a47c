// The control interface: what a client (the CLI, a test, a UI shell) sends the host over its Unix socket.
// Same framing and envelope as the plugin protocol. `navigate`, `tree/query` and `$/ping` are shared with plugins.

/// `open` (client → host): apply a deep link. Validated first (a dry run through the composed route tables); then
/// applied as one atomic chain, hop by hop through the owning plugins. An invalid link changes nothing and
/// `-32014 deepLinkInvalid` says which segment failed (`data.segment`, `data.index`).
///
/// Opened with `defer` (or under the manifest's `deepLinks.defer`), a link that cannot be applied yet (a guard on
/// its path defers it, or it leads through a root that is not active) is answered at once as pending (`deferred`)
/// and applied as its own revision once it can be (§13.5).
public enum OpenRequest: ControlRequest {
    public static let method = "open"

    public struct Params: Codable, Sendable, Equatable {
        public var url: String
        /// Wait for the link to become valid instead of failing (default: the manifest's `deepLinks.defer`, else
        /// false).
        public var `defer`: Bool?
        /// How long it may wait, in milliseconds (default: the manifest's `deepLinks.deferMs`, else 300,000).
        public var deferMs: Int?

        public init(url: String, defer: Bool? = nil, deferMs: Int? = nil) {
            self.url = url
            self.defer = `defer`
            self.deferMs = deferMs
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// The tree's revision afterwards (after the redirect, for a link that waits).
        public var revision: UInt64
        /// Where the link landed; for a link that waits, where the redirect landed, else the root.
        public var instance: InstanceID
        /// The link waits (it was not applied).
        public var deferred: DeferredDeepLink?
        /// The link that waited before and is dropped for this one.
        public var replaced: DeferredDeepLink?
        /// Why the redirect a guard asked for could not be applied (the link waits all the same).
        public var redirectError: ResponseError?

        public init(
            revision: UInt64, instance: InstanceID, deferred: DeferredDeepLink? = nil,
            replaced: DeferredDeepLink? = nil, redirectError: ResponseError? = nil
        ) {
            self.revision = revision
            self.instance = instance
            self.deferred = deferred
            self.replaced = replaced
            self.redirectError = redirectError
        }

        /// What a link applied at once answers, as `navigate` would.
        public init(_ applied: NavigateRequest.Result, replaced: DeferredDeepLink? = nil) {
            self.init(revision: applied.revision, instance: applied.instance, replaced: replaced)
        }

        /// The revision and the instance, as `navigate` answers them.
        public var navigation: NavigateRequest.Result {
            NavigateRequest.Result(revision: revision, instance: instance)
        }
    }
}

/// `validate` (client → host): the dry run of `open` alone; nothing changes.
public enum ValidateRequest: ControlRequest {
    public static let method = "validate"

    public struct Params: Codable, Sendable, Equatable {
        public var url: String
        public init(url: String) { self.url = url }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var valid: Bool
        /// The chain `open` would apply, starting at the root.
        public var steps: [NavigationStep]?
        public var error: ResponseError?

        public init(valid: Bool, steps: [NavigationStep]? = nil, error: ResponseError? = nil) {
            self.valid = valid
            self.steps = steps
            self.error = error
        }
    }
}

/// `tree/get` (client → host): the current snapshot.
public enum TreeGetRequest: ControlRequest {
    public static let method = "tree/get"
    public typealias Params = Empty
    public typealias Result = TreeSnapshot
}

/// `tree/render` (client → host): the tree as indented text, JSON, Graphviz DOT or Mermaid.
public enum TreeRenderRequest: ControlRequest {
    public static let method = "tree/render"

    public enum Format: String, Codable, Sendable, CaseIterable {
        case text, json, dot, mermaid
    }

    public struct Params: Codable, Sendable, Equatable {
        public var format: Format
        public init(format: Format) { self.format = format }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var revision: UInt64
        public var text: String
        public init(revision: UInt64, text: String) {
            self.revision = revision
            self.text = text
        }
    }
}

/// `tree/subscribe` (client → host): receive `tree/changed` after every change (and `plugin/changed`,
/// `coordinator/destroyed`). The result is the current snapshot, so nothing is missed between the two.
public enum TreeSubscribeRequest: ControlRequest {
    public static let method = "tree/subscribe"

    public struct Params: Codable, Sendable, Equatable {
        /// Include the snapshot in each `tree/changed` (default true); false sends the revision only.
        public var snapshots: Bool?
        /// Each `tree/changed` carries a patch to the previous snapshot (`base`, `patch`) instead of the whole
        /// snapshot; a full snapshot only when the client cannot have the base (spec §15). Default false.
        public var deltas: Bool?
        public init(snapshots: Bool? = nil, deltas: Bool? = nil) {
            self.snapshots = snapshots
            self.deltas = deltas
        }
    }

    public typealias Result = TreeSnapshot
}

/// `tree/unsubscribe` (client → host).
public enum TreeUnsubscribeRequest: ControlRequest {
    public static let method = "tree/unsubscribe"
    public typealias Params = Empty
    public typealias Result = Empty
}

/// `user/dismissed` (client → host): the user dismissed an entry in the UI (swiped back, dragged a sheet away).
/// The tree follows (the entry and everything above it go) and the owning plugin gets `coordinator/dismissed` with
/// reason `user`.
public enum UserDismissedRequest: ControlRequest {
    public static let method = "user/dismissed"

    public typealias Params = EntryReference
    public typealias Result = NavigateRequest.Result
}

/// `user/action` (client → host): the user did something on a screen (a button); the entry's owner decides where
/// to go (`coordinator/action`). Checked first against the route's declared `actions`: an undeclared action or
/// params that do not fit are `-32602 invalidParams` naming `action` or `params.NAME`, and nothing is sent.
public enum UserActionRequest: ControlRequest {
    public static let method = "user/action"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        public var entry: EntryID
        public var action: String
        public var params: JSONValue?

        public init(instance: InstanceID, entry: EntryID, action: String, params: JSONValue? = nil) {
            self.instance = instance
            self.entry = entry
            self.action = action
            self.params = params
        }
    }

    /// The revision after the coordinator's steps (unchanged when it answered none) and where they landed.
    public typealias Result = NavigateRequest.Result
}

/// `host/status` (client → host): each plugin's state.
public enum HostStatusRequest: ControlRequest {
    public static let method = "host/status"
    public typealias Params = Empty

    public struct Plugin: Codable, Sendable, Equatable {
        public var name: String
        public var state: String
        public var pid: Int32?
        public var version: String?
        public var restarts: Int
        public var error: ResponseError?
        /// Spawn to handshake done for the running process, in µs.
        public var startupMicroseconds: UInt64?
        /// `running` (it has a process), `lazy` (started on first need, not yet) or `hibernated` (stopped while
        /// idle, its instances' state kept by the host); absent when it is none of these (stopped, failed,
        /// waiting to restart). Spec §20.
        public var residency: String?
        /// The plugin's last upgrade (§20), naming both versions.
        public var upgrade: Upgrade?

        /// A plugin's last upgrade: from which version to which, and how far it got.
        public struct Upgrade: Codable, Sendable, Equatable {
            public var from: String?
            public var to: String?
            /// `starting`, `holding`, `migrating`, `probation`, `upgraded`, `rolledBack`, `refused` or `failed`.
            public var phase: String

            public init(from: String?, to: String?, phase: String) {
                self.from = from
                self.to = to
                self.phase = phase
            }
        }

        public init(
            name: String, state: String, pid: Int32?, version: String?, restarts: Int, error: ResponseError?,
            startupMicroseconds: UInt64? = nil, residency: String? = nil, upgrade: Upgrade? = nil
        ) {
            self.name = name
            self.state = state
            self.pid = pid
            self.version = version
            self.restarts = restarts
            self.error = error
            self.startupMicroseconds = startupMicroseconds
            self.residency = residency
            self.upgrade = upgrade
        }
    }

    /// Facts about the host process itself.
    public struct Host: Codable, Sendable, Equatable {
        public var pid: Int32
        /// The longest stretch, in ms, during which the host's loop did not poll for I/O (a long callback, CPU
        /// starvation, a stopped process). Plugin deadlines do not count such stalls (Protocol/README.md §6).
        public var maxLoopLagMs: UInt64
        /// The loop's total stalled time in ms, excluded from every deadline a plugin is judged by.
        public var stalledMs: UInt64

        public init(pid: Int32, maxLoopLagMs: UInt64, stalledMs: UInt64) {
            self.pid = pid
            self.maxLoopLagMs = maxLoopLagMs
            self.stalledMs = stalledMs
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var revision: UInt64
        public var plugins: [Plugin]
        /// Composition problems found at start-up (the app started without the plugins they name).
        public var composition: [ResponseError]
        /// The host process (absent from hosts before this field existed).
        public var host: Host?
        /// Which containment is in effect (absent from hosts that predate it).
        public var containment: Containment?
        /// The state file, when the host keeps one (`--state`): whether the newest trees reach it.
        public var stateFile: StateFile?

        public init(
            revision: UInt64, plugins: [Plugin], composition: [ResponseError], host: Host? = nil,
            containment: Containment? = nil, stateFile: StateFile? = nil
        ) {
            self.revision = revision
            self.plugins = plugins
            self.composition = composition
            self.host = host
            self.containment = containment
            self.stateFile = stateFile
        }
    }

    /// Whether the tree reaches the state file (Protocol/README.md §17). A write that fails (a full disk, a file-size
    /// limit) does not stop the app: it goes on serving, and this says which revision a restart would come back to.
    public struct StateFile: Codable, Sendable, Equatable {
        public var path: String
        /// The newest revision on disk (absent until the first write of this run).
        public var writtenRevision: UInt64?
        /// Writes that failed since the last one that succeeded (0: the file is current, within its debounce).
        public var failures: Int
        /// Why the last write failed (absent while writes succeed).
        public var error: String?

        public init(path: String, writtenRevision: UInt64?, failures: Int, error: String? = nil) {
            self.path = path
            self.writtenRevision = writtenRevision
            self.failures = failures
            self.error = error
        }
    }

    /// How the host keeps every descendant of its plugins (including ones that `setsid()` or double-fork) from
    /// outliving it.
    public struct Containment: Codable, Sendable, Equatable {
        /// `pid-namespace`, `cgroup`, `process-group` or `none`.
        public var mechanism: String
        /// Each stronger mechanism that is not in effect, with the reason.
        public var notUsed: [String: String]
        /// The running guardian's pid (absent with `none`, or while a new one is being started).
        public var guardian: Int32?

        public init(mechanism: String, notUsed: [String: String], guardian: Int32? = nil) {
            self.mechanism = mechanism
            self.notUsed = notUsed
            self.guardian = guardian
        }
    }
}

/// `host/shutdown` (client → host): stop every plugin and exit.
public enum HostShutdownRequest: ControlRequest {
    public static let method = "host/shutdown"
    public typealias Params = Empty
    public typealias Result = Empty
}

/// `plugin/start` (client → host): start a plugin that is not running (failed, stopped) again, as a restart that
/// does not count toward its restart intensity: the operator has fixed what made it fail. Answered once it serves,
/// with its status (its instances restored and its placeholders created), or with the error it failed with.
/// A plugin that is running is left alone (answered when it serves).
public enum PluginStartRequest: ControlRequest {
    public static let method = "plugin/start"

    public struct Params: Codable, Sendable, Equatable {
        /// The plugin's name in the manifest.
        public var plugin: String
        public init(plugin: String) { self.plugin = plugin }
    }

    public typealias Result = HostStatusRequest.Plugin
}
