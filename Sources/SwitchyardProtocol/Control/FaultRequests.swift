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
