// Fault injection on the pipes of a plugin (Protocol/README.md §15.2, §22): what a fault
// experiment asks of a host started to take faults. The plugin's binary is unchanged: the host relays its stdio and
// applies the faults itself.

/// One way the relay between the host and a plugin misbehaves in one direction (Toxiproxy's toxics): each line that
/// passes is affected with ``probability``.
public struct Toxic: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// Each line is held `latencyMs` ± `jitterMs`; order is kept.
        case latency
        /// The direction carries at most `bytesPerSecond`.
        case bandwidth
        /// Each line is split into fragments of `averageSize` ± `sizeVariation` bytes, `delayMs` apart: legal
        /// framing, which must cost nothing.
        case slicer
        /// `bytes` more pass (the end of a line may be cut), then the stream ends: the plugin reads end of file on
        /// its stdin, or the host does on the plugin's stdout.
        case limitData
        /// Nothing passes; the pipe stays open.
        case blackhole
        /// One byte of the line gets its high bit flipped: an ASCII byte becomes invalid UTF-8, which a strict
        /// reader must reject (a flip that yields other valid JSON would be a mis-parse no framing can detect).
        case corrupt
        /// The line is delivered twice.
        case duplicate
    }

    /// Which way the affected bytes travel.
    public enum Direction: String, Codable, Sendable, CaseIterable {
        /// Host → plugin (its stdin): requests and notifications.
        case toPlugin
        /// Plugin → host (its stdout): answers and the plugin's own requests.
        case fromPlugin
    }

    public var kind: Kind
    public var direction: Direction
    /// The chance, 0 to 1, that a line is affected (default 1). `bandwidth` and `limitData` ignore it.
    public var probability: Double?
    public var latencyMs: Int?
    public var jitterMs: Int?
    public var bytesPerSecond: Int?
    public var averageSize: Int?
    public var sizeVariation: Int?
    public var delayMs: Int?
    public var bytes: Int?

    public init(
        _ kind: Kind, _ direction: Direction, probability: Double? = nil, latencyMs: Int? = nil, jitterMs: Int? = nil,
        bytesPerSecond: Int? = nil, averageSize: Int? = nil, sizeVariation: Int? = nil, delayMs: Int? = nil,
        bytes: Int? = nil
    ) {
        self.kind = kind
        self.direction = direction
        self.probability = probability
        self.latencyMs = latencyMs
        self.jitterMs = jitterMs
        self.bytesPerSecond = bytesPerSecond
        self.averageSize = averageSize
        self.sizeVariation = sizeVariation
        self.delayMs = delayMs
        self.bytes = bytes
    }

    /// Why this toxic cannot be applied, naming the field (nil: it can).
    public var problem: (field: String, reason: String)? {
        if let probability, !(0...1).contains(probability) { return ("probability", "must be between 0 and 1") }
        for (field, value) in [
            ("latencyMs", latencyMs), ("jitterMs", jitterMs), ("delayMs", delayMs), ("bytes", bytes),
            ("sizeVariation", sizeVariation),
        ] {
            if let value, value < 0 { return (field, "must not be negative") }
        }
        switch kind {
        case .latency where latencyMs == nil: return ("latencyMs", "latency needs latencyMs")
        case .bandwidth where (bytesPerSecond ?? 0) < 1: return ("bytesPerSecond", "bandwidth needs bytesPerSecond ≥ 1")
        case .slicer where (averageSize ?? 0) < 1: return ("averageSize", "slicer needs averageSize ≥ 1")
        case .limitData where bytes == nil: return ("bytes", "limitData needs bytes")
        default: return nil
        }
    }
}

/// `plugin/toxics` (client → host): replaces the faults on a plugin's pipes. An empty list (and no start delay or
/// crash on restore) heals them. They stay across the plugin's restarts until replaced. Only on a host started with
/// fault injection on; otherwise `-32011 notAllowed`.
public enum PluginToxicsRequest: ControlRequest {
    public static let method = "plugin/toxics"

    public struct Params: Codable, Sendable, Equatable {
        public var plugin: String
        public var toxics: [Toxic]
        /// Holds everything the plugin writes until this long after each start: a slow start, past the handshake's
        /// deadline (`startTimeoutMs`) or not.
        public var startDelayMs: Int?
        /// Kills the plugin (SIGKILL) when the host sends it its first `coordinator/create` with reason `restore`:
        /// a crash while restoring. Once.
        public var crashOnRestore: Bool?
        /// Seeds the toxics' choices (which lines, how long), so an experiment replays.
        public var seed: UInt64?

        public init(
            plugin: String, toxics: [Toxic], startDelayMs: Int? = nil, crashOnRestore: Bool? = nil, seed: UInt64? = nil
        ) {
            self.plugin = plugin
            self.toxics = toxics
            self.startDelayMs = startDelayMs
            self.crashOnRestore = crashOnRestore
            self.seed = seed
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// The toxics now in force.
        public var toxics: Int
        public init(toxics: Int) { self.toxics = toxics }
    }
}

/// `plugin/limits` (client → host): limits the resources of a plugin's running process (spec §22.5). The request
/// replaces the limits the process had from an earlier one; `{plugin}` alone heals them all (the previous soft
/// limits are put back, the duty cycle ends with the process running). A restarted plugin is a new process and runs
/// without them. Only on a host started with fault injection on; otherwise `-32011 notAllowed`.
public enum PluginLimitsRequest: ControlRequest {
    public static let method = "plugin/limits"

    /// How a limit was put on the process, which depends on what the machine offers.
    public enum Mechanism: String, Codable, Sendable, CaseIterable {
        /// A cgroup v2 of its own below the plugins' delegated cgroup: `memory.max` (the kernel's OOM killer ends
        /// the process) or `cpu.max` (the scheduler throttles it).
        case cgroup
        /// A soft rlimit set with `prlimit(2)`: `RLIMIT_AS` (its allocations fail) or `RLIMIT_NOFILE` (opening a
        /// descriptor fails with `EMFILE`).
        case rlimit
        /// `SIGSTOP` and `SIGCONT` to its process group from the host's loop: it runs `cpuPercent` of each
        /// `cpuPeriodMs`.
        case dutyCycle
    }

    public struct Params: Codable, Sendable, Equatable {
        public var plugin: String
        /// Memory it may still take beyond what it holds now, in bytes.
        public var memoryBytes: Int?
        /// The share of one CPU it may use, 1 to 99 percent.
        public var cpuPercent: Int?
        /// The period the CPU share is measured over, 10 to 10,000 ms (default 100).
        public var cpuPeriodMs: Int?
        /// Descriptors it may still open beyond its highest one now.
        public var descriptors: Int?

        public init(
            plugin: String, memoryBytes: Int? = nil, cpuPercent: Int? = nil, cpuPeriodMs: Int? = nil,
            descriptors: Int? = nil
        ) {
            self.plugin = plugin
            self.memoryBytes = memoryBytes
            self.cpuPercent = cpuPercent
            self.cpuPeriodMs = cpuPeriodMs
            self.descriptors = descriptors
        }

        /// `limits` on `plugin` (an experiment file's fault gives the limits, its target the plugin).
        public init(plugin: String, _ limits: Limits) {
            self.init(
                plugin: plugin, memoryBytes: limits.memoryBytes, cpuPercent: limits.cpuPercent,
                cpuPeriodMs: limits.cpuPeriodMs, descriptors: limits.descriptors)
        }

        /// The default of ``cpuPeriodMs``.
        public static let defaultCPUPeriodMs = 100

        /// How long the process is held in each period: `cpuPeriodMs × (100 − cpuPercent) / 100` ms.
        public var heldMsPerPeriod: Int? {
            cpuPercent.map { (cpuPeriodMs ?? Self.defaultCPUPeriodMs) * (100 - $0) / 100 }
        }

        /// Why these limits cannot be applied to a plugin whose heartbeat times out after `heartbeatTimeoutMs`
        /// (0: no heartbeat), naming the field; nil if they can. A CPU limit holds the process for part of each
        /// period; a `$/ping` arriving as that part begins waits all of it. The held part must stay within a
        /// quarter of the heartbeat's timeout, so that a healthy plugin, held, still has three quarters of the
        /// timeout (several of its running parts) to answer: a CPU limit slows a plugin and never gets it judged
        /// hung.
        public func problem(heartbeatTimeoutMs: Int) -> (field: String, reason: String)? {
            if let memoryBytes, memoryBytes < 0 { return ("memoryBytes", "must not be negative") }
            if let descriptors, descriptors < 0 { return ("descriptors", "must not be negative") }
            if let cpuPercent, !(1...99).contains(cpuPercent) { return ("cpuPercent", "must be 1 to 99") }
            if let cpuPeriodMs {
                guard cpuPercent != nil else { return ("cpuPeriodMs", "is for a CPU limit: give cpuPercent too") }
                guard (10...10_000).contains(cpuPeriodMs) else { return ("cpuPeriodMs", "must be 10 to 10000") }
            }
            if let held = heldMsPerPeriod, heartbeatTimeoutMs > 0, held * 4 > heartbeatTimeoutMs {
                let period = cpuPeriodMs ?? Self.defaultCPUPeriodMs
                return (
                    cpuPeriodMs == nil ? "cpuPercent" : "cpuPeriodMs",
                    "holds the plugin \(held) ms of every \(period) ms, more than a quarter of its heartbeat timeout (\(heartbeatTimeoutMs) ms): a healthy plugin could miss its heartbeat and be judged hung; use a shorter period or a larger share"
                )
            }
            return nil
        }
    }

    /// The limits of ``Params`` without the plugin, as an experiment file's `limits` fault gives them (§22.2).
    public struct Limits: Codable, Sendable, Equatable {
        public var memoryBytes: Int?
        public var cpuPercent: Int?
        public var cpuPeriodMs: Int?
        public var descriptors: Int?

        public init(memoryBytes: Int? = nil, cpuPercent: Int? = nil, cpuPeriodMs: Int? = nil, descriptors: Int? = nil) {
            self.memoryBytes = memoryBytes
            self.cpuPercent = cpuPercent
            self.cpuPeriodMs = cpuPeriodMs
            self.descriptors = descriptors
        }

        /// Whether it limits nothing (which would only heal).
        public var isEmpty: Bool { self == Limits() }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// The process the limits were put on.
        public var pid: Int32
        /// How each limit was applied; absent: that limit is lifted.
        public var memory: Mechanism?
        public var cpu: Mechanism?
        public var descriptors: Mechanism?

        public init(pid: Int32, memory: Mechanism? = nil, cpu: Mechanism? = nil, descriptors: Mechanism? = nil) {
            self.pid = pid
            self.memory = memory
            self.cpu = cpu
            self.descriptors = descriptors
        }
    }
}
