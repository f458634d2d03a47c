public import SwitchyardProtocol

/// A fault experiment as data (Protocol/README.md §22.2, `schema/experiment.schema.json`): the app, the load, a
/// schedule of faults, the checkers and the seed. `switchyard chaos --experiment FILE` reads one; the command's
/// flags build the same value (``quick(manifest:seed:durationMs:rate:faultIntervalMs:kinds:victim:)``), so both
/// forms run one code path.
public struct ExperimentSpec: Codable, Sendable, Equatable {
    /// The manifest of the app, relative to the experiment file's folder (absolute once loaded).
    public var app: String
    /// The plugin the misbehaving plugin plays (it can flood, and carries the seeded defect); its stack is the one
    /// the model checker follows. Default `profile`.
    public var victim: String?
    /// Choices (requests, random targets) follow it; the same seed gives the same schedule.
    public var seed: UInt64
    /// Milliseconds of load after the warm-up.
    public var durationMs: Int
    public var load: Load
    public var faults: [Fault]
    /// Which checkers run over the history (default: all of them).
    public var checkers: [Checker]?
    /// A request without an answer after this long is lost (default 30 s).
    public var requestDeadlineMs: Int?
    /// A defect planted in the victim on purpose, which the model checker must find.
    public var defect: Defect?

    /// How the load is made.
    public struct Load: Codable, Sendable, Equatable {
        /// Requests per second, all clients together.
        public var rate: Int
        /// Clients, each sending its next request once its last is settled (Jepsen's processes). Client 0 drives
        /// the victim's stack (what the model checker follows); the others the rest of the app. Default 4.
        public var clients: Int?
        /// Relative weights of the kinds of request; a kind left out is not sent.
        public var mix: Mix?
        /// Each client sends at least this many requests, past `durationMs` if it must: what an experiment needs to
        /// reach (a seeded defect's phase) is then reached however slow the machine, instead of depending on it.
        public var minimumRequests: Int?

        public init(rate: Int, clients: Int? = nil, mix: Mix? = nil, minimumRequests: Int? = nil) {
            self.rate = rate
            self.clients = clients
            self.mix = mix
            self.minimumRequests = minimumRequests
        }
    }

    /// Weights of the request kinds. Links and tabs go to the other plugins; chains, actions, dismissals and
    /// sign-outs to the victim's stack (a sign-out and sign-in replaces it).
    public struct Mix: Codable, Sendable, Equatable {
        public var links: Int?
        public var chains: Int?
        public var tabs: Int?
        public var actions: Int?
        public var dismissals: Int?
        public var signOuts: Int?

        public init(
            links: Int? = nil, chains: Int? = nil, tabs: Int? = nil, actions: Int? = nil, dismissals: Int? = nil,
            signOuts: Int? = nil
        ) {
            self.links = links
            self.chains = chains
            self.tabs = tabs
            self.actions = actions
            self.dismissals = dismissals
            self.signOuts = signOuts
        }

        /// The default mix: mostly links and chains, some actions and dismissals, a few sign-outs.
        public static let standard = Mix(links: 35, chains: 30, tabs: 15, actions: 8, dismissals: 8, signOuts: 4)
    }

    /// One fault of the schedule, with its healing step at `startMs + durationMs`.
    public struct Fault: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable, CaseIterable {
            /// SIGKILL: a crash; supervision restarts the plugin (the healing is the host's).
            case kill
            /// SIGSTOP, healed by SIGCONT after `durationMs`; without one it is left to the heartbeat, which finds it
            /// hung, and to supervision, which restarts it.
            case stop
            /// The victim floods its stdout (rate limit, quarantine); healed by its restart.
            case flood
            /// Toxics on the plugin's pipes (§22.1), healed by removing them after `durationMs`.
            case pipes
            /// A slow start: the plugin is killed and its restarts' handshakes are held `startDelayMs` (default 500)
            /// until the delay is removed after `durationMs` (default 1,000 ms); past its `startTimeoutMs` a start
            /// fails and supervision retries.
            case slowStart
            /// A crash while restoring: the plugin is killed, and killed again as its first instance is restored;
            /// supervision heals it with one more restart.
            case crashOnRestore
            /// Resource limits on the plugin's running process (§22.5), healed by lifting them after `durationMs`
            /// (default 1,000 ms), or by the restart a memory limit's crash brings.
            case limits
            /// The host itself (target `host`): SIGKILL to the host, which runs as a child of the experiment on a
            /// state file; healed by starting it again on that file after `durationMs` (default 0: at once). Its
            /// restored tree must be one it published, no older than what it had said was written (§17).
            case hostKill
            /// A full disk under the state file (target `host`): the host's file-size limit lowered so no state file
            /// fits, lifted after `durationMs` (default 2,000 ms). The app must go on serving and say so.
            case diskFull

            /// Whether the fault is the host's own (target `host`, the host run as a child process).
            public var isHostFault: Bool { self == .hostKill || self == .diskFull }
        }

        public var kind: Kind
        public var target: Target
        public var startMs: Int
        /// How long the fault lasts before its healing step: `stop` (default: none, the host's verdict heals it),
        /// `pipes` and `slowStart` (default 1,000 ms).
        public var durationMs: Int?
        /// `pipes`: the toxics to set.
        public var toxics: [Toxic]?
        /// `slowStart`: how long each start's handshake is held (default 500 ms).
        public var startDelayMs: Int?
        /// `limits`: the limits to put on the running process.
        public var limits: PluginLimitsRequest.Limits?

        public init(
            kind: Kind, target: Target, startMs: Int, durationMs: Int? = nil, toxics: [Toxic]? = nil,
            startDelayMs: Int? = nil, limits: PluginLimitsRequest.Limits? = nil
        ) {
            self.kind = kind
            self.target = target
            self.startMs = startMs
            self.durationMs = durationMs
            self.toxics = toxics
            self.startDelayMs = startDelayMs
            self.limits = limits
        }
    }

    /// Which plugins a fault hits: a named one, a random one (chosen by the seed), several, or all; or the host
    /// (`hostKill`, `diskFull`).
    public enum Target: Codable, Sendable, Equatable {
        case plugin(String)
        case random
        case plugins([String])
        case all
        case host

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let names = try? container.decode([String].self) {
                self = .plugins(names)
                return
            }
            let name = try container.decode(String.self)
            switch name {
            case "random": self = .random
            case "all": self = .all
            case "host": self = .host
            default: self = .plugin(name)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .plugin(let name): try container.encode(name)
            case .random: try container.encode("random")
            case .all: try container.encode("all")
            case .host: try container.encode("host")
            case .plugins(let names): try container.encode(names)
            }
        }
    }

    /// The checkers over the history (§22.3).
    public enum Checker: String, Codable, Sendable, CaseIterable {
        case lost, revisions, model, verdicts, latency
        /// The host's own faults: each restored tree one the host published, no older than what it had said was
        /// written; a full disk served through and reported; no exit of the host the experiment did not cause.
        case host
    }

    /// `wrongAnswerEvery`: the victim answers its k-th route wrongly when k % every == phase (§22.4).
    public struct Defect: Codable, Sendable, Equatable {
        public var wrongAnswerEvery: Int
        public var phase: Int?

        public init(wrongAnswerEvery: Int, phase: Int? = nil) {
            self.wrongAnswerEvery = wrongAnswerEvery
            self.phase = phase
        }
    }

    public init(
        app: String, victim: String? = nil, seed: UInt64, durationMs: Int, load: Load, faults: [Fault],
        checkers: [Checker]? = nil, requestDeadlineMs: Int? = nil, defect: Defect? = nil
    ) {
        self.app = app
        self.victim = victim
        self.seed = seed
        self.durationMs = durationMs
        self.load = load
        self.faults = faults
        self.checkers = checkers
        self.requestDeadlineMs = requestDeadlineMs
        self.defect = defect
    }

    /// The victim's name (default `profile`).
    public var victimName: String { victim ?? "profile" }
    /// Whether a fault is the host's own: the host then runs as a child process (``ChildHost``).
    public var hasHostFaults: Bool { faults.contains { $0.kind.isHostFault } }
    /// The checkers that run.
    public var enabledCheckers: [Checker] { checkers ?? Checker.allCases }

    /// Floods of the quick form are at least this far apart: each ends in a quarantine and a restart of the one
    /// plugin that can flood, and five restarts within 30 s make supervision give up on it (§16).
    static let floodSpacingMs = 10_000

    /// The quick form (`switchyard chaos` with flags): one fault every `faultIntervalMs`, of a kind in `kinds`
    /// chosen by the seed, on a random plugin; a flood (on the victim, the one plugin that can flood) one time in
    /// ten, and never within ``floodSpacingMs`` of the last.
    public static func quick(
        manifest: String, seed: UInt64, durationMs: Int, rate: Int, faultIntervalMs: Int,
        kinds: [Fault.Kind], victim: String
    ) -> ExperimentSpec {
        var generator = SeededGenerator(seed: seed &* 31 &+ 7)
        var faults: [Fault] = []
        var at = faultIntervalMs
        var lastFlood = Int.min / 2
        let others = kinds.filter { $0 != .flood }
        while at < durationMs, !kinds.isEmpty, faultIntervalMs > 0 {
            let roll = generator.next()
            let floods = kinds.contains(.flood) && (others.isEmpty || roll % 10 == 0)
            if floods && at - lastFlood >= floodSpacingMs {
                faults.append(Fault(kind: .flood, target: .plugin(victim), startMs: at))
                lastFlood = at
            } else if !others.isEmpty {
                let kind = others[Int(roll / 10 % UInt64(others.count))]
                // A full disk lasts half the interval, so the next fault (a host kill, maybe) finds it healed.
                faults.append(
                    Fault(
                        kind: kind, target: kind.isHostFault ? .host : .random, startMs: at,
                        durationMs: kind == .diskFull ? faultIntervalMs / 2 : nil))
            }
            at += faultIntervalMs
        }
        return ExperimentSpec(
            app: manifest, victim: victim, seed: seed, durationMs: durationMs, load: Load(rate: rate), faults: faults)
    }
}
