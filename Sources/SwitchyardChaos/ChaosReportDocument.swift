public import SwitchyardProtocol

/// The report of a run as files (Protocol/README.md §22.6, `schema/chaos-report.schema.json`): `report.json`, the
/// figures, every checker's result, the seed, the replay command and the timeline, machine-readable; and
/// `report.html`, the same for a person, one self-contained page that draws its charts offline (Chart.js inlined).
public struct ChaosReportDocument: Sendable {
    let report: ChaosReport
    let results: [CheckerResult]
    let timeline: ChaosTimeline
    let command: String
    let replay: String?

    /// The report of `outcome`; `command` is the command line that ran it, `replay` the one that runs the same
    /// experiment again (nil: none was saved).
    public init(outcome: ChaosExperiment.Outcome, command: String, replay: String?) {
        self.init(
            report: outcome.report, history: outcome.history, results: outcome.results, plugins: outcome.plugins,
            command: command, replay: replay)
    }

    /// The report of `history`, a run of `spec` on an app of `plugins` (manifest order), judged as `results` say:
    /// for a history read back (``History/load(path:)``) or written by hand. The host's figures (memory, restarts,
    /// the tree at the end) are not in a history: they read as zero.
    public init(
        history: History, spec: ExperimentSpec, results: [CheckerResult], plugins: [String], command: String,
        replay: String?
    ) {
        self.init(
            report: ChaosReport(history: history, spec: spec), history: history, results: results, plugins: plugins,
            command: command, replay: replay)
    }

    init(
        report: ChaosReport, history: History, results: [CheckerResult], plugins: [String], command: String,
        replay: String?
    ) {
        self.report = report
        self.results = results
        timeline = ChaosTimeline(history: history, durationMs: Int(report.seconds * 1_000), plugins: plugins)
        self.command = command
        self.replay = replay
    }

    /// Whether every checker passed.
    public var passed: Bool { results.allSatisfy(\.passed) }

    /// `report.json`: the terminal report's figures (``ChaosReport/json``'s members), then the rest.
    public var value: JSONValue {
        var object = report.object
        object["format"] = "switchyard-chaos-report"
        object["version"] = 1
        object["durationMs"] = .double(timeline.endMs)
        object["command"] = .string(command)
        object["replay"] = replay.map(JSONValue.string) ?? .null
        object["passed"] = .bool(passed)
        object["checkers"] = .array(
            results.map { result in
                [
                    "checker": .string(result.checker.rawValue), "passed": .bool(result.passed),
                    "summary": .string(result.summary), "violations": .array(result.violations.map(JSONValue.string)),
                ]
            })
        object["bucketMs"] = .int(Int64(timeline.bucketMs))
        object["timeline"] = .array(
            timeline.buckets.map { bucket in
                [
                    "startMs": .double(bucket.startMs), "ok": .int(Int64(bucket.ok)), "fail": .int(Int64(bucket.fail)),
                    "info": .int(Int64(bucket.info)),
                    "p50": ChaosReport.percentile(bucket.latencies, 0.5).map(JSONValue.double) ?? .null,
                    "p99": ChaosReport.percentile(bucket.latencies, 0.99).map(JSONValue.double) ?? .null,
                ]
            })
        object["faultWindows"] = .array(
            timeline.faults.map { window in
                [
                    "index": .int(Int64(window.index)), "kind": .string(window.kind),
                    "plugins": .array(window.plugins.map(JSONValue.string)), "label": .string(window.label),
                    "startMs": .double(window.startMs), "endMs": window.endMs.map(JSONValue.double) ?? .null,
                    "healedBy": window.healedByExperiment ? "experiment" : "host",
                ]
            })
        object["plugins"] = .array(
            timeline.lanes.map { lane in
                [
                    "name": .string(lane.plugin),
                    "spans": .array(
                        lane.spans.map { span in
                            var value: JSONObject = [
                                "state": .string(span.state), "fromMs": .double(span.fromMs),
                                "toMs": .double(span.toMs),
                            ]
                            if let verdict = span.verdict { value["verdict"] = .string(verdict) }
                            if let reason = span.reason { value["reason"] = .string(reason) }
                            return .object(value)
                        }),
                    "restarts": .array(lane.restarts.map(JSONValue.double)),
                ]
            })
        return .object(object)
    }

    /// `report.json`'s text.
    public var json: String { JSONWriter.string(value) + "\n" }

    /// `report.html`: one page, no request leaves it (the data and Chart.js are inline), readable from `file://`.
    public var html: String {
        // Inside <script> only `</script` and `<!--` could end or change the element; JSON has `<` in strings only,
        // where \u003c is the same character.
        let data = JSONWriter.string(value).replacing("<", with: "\\u003c")
        let verdict = passed ? "passed" : "FAILED"
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>switchyard chaos: seed \(report.seed), \(verdict)</title>
            <style>\(ChaosReportPage.style)</style>
            </head>
            <body>
            <header>
            <h1>switchyard chaos <span class="\(passed ? "pass" : "fail")">\(verdict)</span></h1>
            <p>\(ChaosReportPage.runLine(report, timeline: timeline))</p>
            <p>seed <code id="seed">\(report.seed)</code> · command <code>\(escaped(command))</code></p>
            \(replay.map { "<p>replay <code id=\"replay\">\(escaped($0))</code></p>" } ?? "")
            </header>
            <section>
            <h2>Latency (answered requests, per \(ChaosReportPage.duration(timeline.bucketMs)))</h2>
            <div class="chart"><canvas id="latency"></canvas></div>
            <h2>Throughput (completed requests per second)</h2>
            <div class="chart"><canvas id="throughput"></canvas></div>
            <h2>Plugin states</h2>
            <div class="chart lanes" style="height: \(80 + 28 * timeline.lanes.count)px"><canvas id="plugins"></canvas></div>
            <p class="note">Shaded: each fault from its injection to its healing step (or, healed by the host, to its targets ready again). Dashed: the load's end (then the last faults settle). ▼ a restart.</p>
            </section>
            <section>
            <h2>Checkers</h2>
            \(ChaosReportPage.checkers(results, seed: report.seed, replay: replay))
            </section>
            <section>
            <h2>Faults</h2>
            \(ChaosReportPage.faults(timeline.faults))
            </section>
            <section>
            <h2>Summary</h2>
            \(ChaosReportPage.summary(report))
            </section>
            <script id="report-data" type="application/json">\(data)</script>
            <script>\(EmbeddedChartJS.source)</script>
            <script>\(ChaosReportPage.script)</script>
            </body>
            </html>

            """
    }
}

/// Text as HTML (element content and attribute values).
func escaped(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for character in text {
        switch character {
        case "&": result += "&amp;"
        case "<": result += "&lt;"
        case ">": result += "&gt;"
        case "\"": result += "&quot;"
        default: result.append(character)
        }
    }
    return result
}
