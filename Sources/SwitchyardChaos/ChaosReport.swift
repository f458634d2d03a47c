import SwitchyardProtocol

/// What the experiment measured, derived from its history: requests sent, answered, failed with a typed error and
/// lost; faults injected and how fast each kind was detected and recovered from; the host's memory before and after.
public struct ChaosReport: Sendable {
    var seconds: Double
    var seed: UInt64
    var rate: Int
    var faultCount: Int
    var sent = 0
    var answered = 0
    var failed: [String: Int] = [:]
    /// Requests that got neither an answer nor a typed error within the deadline (the number that must be 0).
    public internal(set) var lost = 0
    /// Requests in flight when the experiment killed the host: no host was left to answer them (not lost).
    public internal(set) var indeterminate = 0
    var faults: [String: Int] = [:]
    var restarts = 0
    var failedPlugins: [String] = []
    /// Milliseconds from the fault to the host noticing it (its target leaving `ready`), per kind of fault.
    var detect: [String: [Double]] = [:]
    /// Milliseconds from the fault to its target ready again (restarted, its instances restored).
    var restore: [String: [Double]] = [:]
    var latencies: [Double] = []
    var rssBefore = 0
    var rssAfter = 0
    var finalTreeServed = false
    var instancesAtEnd = 0

    /// The figures of `history`, a run of `spec`.
    init(history: History, spec: ExperimentSpec) {
        seconds = Double(spec.durationMs) / 1_000
        seed = spec.seed
        rate = spec.load.rate
        faultCount = spec.faults.count
        for operation in history.operations {
            sent += 1
            switch operation.completion?.type {
            case .ok?:
                answered += 1
                if let latency = operation.latency { latencies.append(latency) }
            case .fail?:
                let name = operation.completion?.error?.split(separator: ":").first.map(String.init) ?? "error"
                failed[name, default: 0] += 1
            case .info? where operation.completion?.cause == "hostKilled": indeterminate += 1
            default: lost += 1
            }
        }
        for fault in history.events where fault.type == .fault {
            let kind = fault.kind ?? "?"
            faults[kind, default: 0] += 1
            // Healed by the experiment (a SIGCONT, toxics removed) before any verdict: nothing to detect.
            let targets = fault.plugins ?? []
            // A state change belongs to this fault until it is healed or the next fault hits one of its targets.
            let end =
                history.events.first { $0.type == .heal && $0.fault == fault.fault }?.time
                ?? history.events.first { other in
                    other.type == .fault && other.time > fault.time
                        && (other.plugins ?? []).contains { targets.contains($0) }
                }?.time ?? .infinity
            let later = history.events.filter {
                $0.type == .plugin && $0.time >= fault.time && targets.contains($0.plugin ?? "")
            }
            guard let down = later.first(where: { $0.state != "ready" }), down.time < end else { continue }
            detect[kind, default: []].append(down.time - fault.time)
            if let back = later.first(where: { $0.time >= down.time && $0.state == "ready" }) {
                restore[kind, default: []].append(back.time - fault.time)
            }
        }
    }

    var failedTotal: Int { failed.values.reduce(0, +) }

    static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    static func format(_ milliseconds: Double?) -> String {
        guard let milliseconds else { return "—" }
        return milliseconds < 10
            ? String(format1: milliseconds, digits: 2) + " ms" : String(format1: milliseconds, digits: 0) + " ms"
    }

    var rssGrowthPercent: Double {
        rssBefore > 0 ? (Double(rssAfter) - Double(rssBefore)) / Double(rssBefore) * 100 : 0
    }

    /// The report for a terminal; `command` is the command line that produced it, so a run can be repeated.
    public func text(command: String) -> String {
        func mib(_ bytes: Int) -> String { String(format1: Double(bytes) / 1_048_576, digits: 1) + " MiB" }
        var lines: [String] = []
        lines.append(
            "switchyard chaos: \(String(format1: seconds, digits: 0)) s, seed \(seed), \(rate) requests/s, \(faultCount) faults scheduled"
        )
        lines.append("  command: \(command)")
        lines.append("")
        lines.append("  requests sent            \(sent)")
        lines.append("  answered                 \(answered)")
        let kinds = failed.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("  failed with a typed error \(failedTotal)" + (kinds.isEmpty ? "" : "  (\(kinds))"))
        lines.append("  lost                     \(lost)")
        if indeterminate > 0 {
            lines.append("  in flight at a host kill \(indeterminate)  (indeterminate: no host to answer)")
        }
        lines.append(
            "  answer latency p50 / p99 \(Self.format(Self.percentile(latencies, 0.5))) / \(Self.format(Self.percentile(latencies, 0.99)))"
        )
        lines.append("")
        let injected = faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("  faults injected          \(faults.values.reduce(0, +))  (\(injected))")
        lines.append(
            "  restarts                 \(restarts)"
                + (failedPlugins.isEmpty ? "" : "  (gave up on: \(failedPlugins.joined(separator: ", ")))"))
        for kind in detect.keys.sorted() {
            let found = detect[kind] ?? []
            let back = restore[kind] ?? []
            lines.append(
                "  \(kind + String(repeating: " ", count: max(0, 6 - kind.count))) detected p50 / p99   \(Self.format(Self.percentile(found, 0.5))) / \(Self.format(Self.percentile(found, 0.99)))   restored tree p50 / p99 \(Self.format(Self.percentile(back, 0.5))) / \(Self.format(Self.percentile(back, 0.99)))  (\(back.count) of \(found.count))"
            )
        }
        lines.append("")
        lines.append(
            "  RSS, host and history    \(mib(rssBefore)) → \(mib(rssAfter)) (\(rssGrowthPercent >= 0 ? "+" : "")\(String(format1: rssGrowthPercent, digits: 1)) %)"
        )
        lines.append(
            "  tree at the end          \(instancesAtEnd) instances, "
                + (finalTreeServed ? "every node served" : "some nodes unavailable"))
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as one JSON object (a line), for tools that compare runs.
    public var json: String { JSONWriter.string(.object(object)) + "\n" }

    /// The figures as JSON members (`report.json` has these, then the rest: ``ChaosReportDocument``).
    var object: JSONObject {
        func stats(_ values: [Double]) -> JSONValue {
            [
                "count": .int(Int64(values.count)), "p50": Self.percentile(values, 0.5).map(JSONValue.double) ?? .null,
                "p99": Self.percentile(values, 0.99).map(JSONValue.double) ?? .null,
            ]
        }
        var object: JSONObject = [
            "seconds": .double(seconds), "seed": .int(Int64(seed)), "rate": .int(Int64(rate)),
            "faultsScheduled": .int(Int64(faultCount)),
            "sent": .int(Int64(sent)), "answered": .int(Int64(answered)), "failedTyped": .int(Int64(failedTotal)),
            "lost": .int(Int64(lost)), "indeterminate": .int(Int64(indeterminate)),
            "restarts": .int(Int64(restarts)), "rssBefore": .int(Int64(rssBefore)), "rssAfter": .int(Int64(rssAfter)),
            "latencyMs": stats(latencies), "finalTreeServed": .bool(finalTreeServed),
        ]
        func sortedObject<V>(_ dictionary: [String: V], _ value: (V) -> JSONValue) -> JSONValue {
            var result = JSONObject()
            for key in dictionary.keys.sorted() { result[key] = dictionary[key].map(value) }
            return .object(result)
        }
        object["failed"] = sortedObject(failed) { .int(Int64($0)) }
        object["faults"] = sortedObject(faults) { .int(Int64($0)) }
        object["detectMs"] = sortedObject(detect, stats)
        object["restoreMs"] = sortedObject(restore, stats)
        return object
    }
}

extension String {
    init(format1 value: Double, digits: Int) {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if digits == 0 {
            self = String(Int(rounded))
        } else {
            var text = String(rounded)
            if let dot = text.firstIndex(of: ".") {
                let decimals = text.distance(from: dot, to: text.endIndex) - 1
                if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
            }
            self = text
        }
    }
}
