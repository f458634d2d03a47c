import SwitchyardProtocol

/// What `report.html` draws, derived from a history: answers per time bucket (throughput, p50 and p99 latency), each
/// fault's window, and each plugin's states over time with its restarts (Protocol/README.md §22.6).
struct ChaosTimeline: Sendable {
    /// The operations that completed within `[startMs, startMs + bucketMs)`.
    struct Bucket: Sendable {
        var startMs: Double
        var ok = 0
        var fail = 0
        var info = 0
        var latencies: [Double] = []
    }

    /// A fault from its injection to its healing step (the experiment's), or else to its targets ready again (the
    /// host's); `endMs` nil when its targets never left `ready` (healed before the host saw anything).
    struct FaultWindow: Sendable {
        var index: Int
        var kind: String
        var plugins: [String]
        var startMs: Double
        var endMs: Double?
        var healedByExperiment: Bool

        /// What the chart writes in the window and the page's table lists: the kind and the targets.
        var label: String { plugins.isEmpty ? "\(kind) host" : "\(kind) \(plugins.joined(separator: ","))" }
    }

    /// A stretch of time a plugin spent in one state.
    struct Span: Sendable {
        var state: String
        /// The host's verdict when it ended the process (`hung`, `quarantined`, `crashed`, …), from the reason.
        var verdict: String?
        var reason: String?
        var fromMs: Double
        var toMs: Double
    }

    struct Lane: Sendable {
        var plugin: String
        var spans: [Span] = []
        /// When the plugin's restart count went up.
        var restarts: [Double] = []
    }

    let bucketMs: Int
    let endMs: Double
    var buckets: [Bucket] = []
    var faults: [FaultWindow] = []
    var lanes: [Lane] = []

    /// About 60 buckets over the run, of 100 ms, 200 ms, 500 ms, 1 s, 2 s, 5 s…: enough points for a line, enough
    /// answers in each for a percentile.
    static func bucketSize(forMs span: Double) -> Int {
        let sizes = [100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000]
        return sizes.first { span / Double($0) <= 60 } ?? 60_000
    }

    /// The timeline of `history`, a run of `durationMs` on an app of `plugins` (manifest order; lanes in it, then
    /// any other plugin the history names).
    init(history: History, durationMs: Int, plugins: [String]) {
        let lastEvent = history.events.map(\.time).max() ?? 0
        let span = max(Double(durationMs), lastEvent)
        bucketMs = Self.bucketSize(forMs: span)
        // A bucket past the last event, so that what happened last (a verdict, a restart) is not on the edge.
        endMs = lastEvent > Double(durationMs) ? lastEvent + Double(bucketMs) : span
        let count = Int((endMs / Double(bucketMs)).rounded(.up)) + 1
        buckets = (0..<count).map { Bucket(startMs: Double($0 * bucketMs)) }
        for operation in history.operations {
            guard let done = operation.completion else { continue }
            let index = min(count - 1, max(0, Int(done.time / Double(bucketMs))))
            switch done.type {
            case .ok:
                buckets[index].ok += 1
                if let latency = operation.latency { buckets[index].latencies.append(latency) }
            case .fail: buckets[index].fail += 1
            default: buckets[index].info += 1
            }
        }
        faults = Self.windows(history)
        lanes = Self.lanes(history, plugins: plugins, endMs: endMs)
    }

    private static func windows(_ history: History) -> [FaultWindow] {
        history.events.filter { $0.type == .fault }.map { fault in
            let targets = fault.plugins ?? []
            if let heal = history.events.first(where: { $0.type == .heal && $0.fault == fault.fault }) {
                return FaultWindow(
                    index: fault.fault ?? 0, kind: fault.kind ?? "?", plugins: targets, startMs: fault.time,
                    endMs: heal.time, healedByExperiment: true)
            }
            // Healed by the host: until the last target that went down is ready again.
            var end: Double?
            for target in targets {
                let later = history.events.filter { $0.type == .plugin && $0.plugin == target && $0.time >= fault.time }
                guard let down = later.first(where: { $0.state != "ready" }) else { continue }
                let back = later.first { $0.time >= down.time && $0.state == "ready" }?.time ?? down.time
                end = max(end ?? back, back)
            }
            return FaultWindow(
                index: fault.fault ?? 0, kind: fault.kind ?? "?", plugins: targets, startMs: fault.time, endMs: end,
                healedByExperiment: false)
        }
    }

    private static func lanes(_ history: History, plugins: [String], endMs: Double) -> [Lane] {
        var names = plugins
        for event in history.events {
            for name in (event.plugins ?? []) + (event.plugin.map { [$0] } ?? []) where !names.contains(name) {
                names.append(name)
            }
        }
        return names.map { name in
            var lane = Lane(plugin: name)
            // Every plugin serves when the load begins (the experiment starts once the app has).
            var current = Span(state: "ready", fromMs: 0, toMs: endMs)
            for event in history.events where event.type == .plugin && event.plugin == name {
                // A restart is the supervisor's decision to start it again (its count goes up at the spawn after).
                if event.state == "restarting", current.state != "restarting" { lane.restarts.append(event.time) }
                let state = event.state ?? "?"
                guard state != current.state || event.reason != current.reason else { continue }
                current.toMs = event.time
                if current.toMs > current.fromMs { lane.spans.append(current) }
                current = Span(
                    state: state, verdict: verdict(event.reason), reason: event.reason, fromMs: event.time, toMs: endMs)
            }
            current.toMs = endMs
            lane.spans.append(current)
            return lane
        }
    }

    /// The host's verdict in a reason it gave (PluginTermination's description: `killed by the host: hung: …`,
    /// `crashed (signal 9)`); nil for none the report names.
    static func verdict(_ reason: String?) -> String? {
        guard let reason else { return nil }
        if reason.contains("quarantin") { return "quarantined" }
        if reason.contains("killed by the host: hung") { return "hung" }
        if reason.contains("killed by the host") { return "killed" }
        if reason.contains("crashed") { return "crashed" }
        if reason.contains("giving up") { return "failed" }
        return nil
    }
}
