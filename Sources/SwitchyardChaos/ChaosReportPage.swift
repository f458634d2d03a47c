/// The parts of `report.html` (``ChaosReportDocument/html``): its tables, written here so the page reads without
/// scripts, and the script that draws the charts from the page's inline data with Chart.js.
enum ChaosReportPage {
    static func duration(_ milliseconds: Int) -> String {
        milliseconds < 1_000 ? "\(milliseconds) ms" : "\(String(format1: Double(milliseconds) / 1_000, digits: 0)) s"
    }

    static func runLine(_ report: ChaosReport, timeline: ChaosTimeline) -> String {
        "\(String(format1: report.seconds, digits: 1)) s of load at \(report.rate) requests/s, "
            + "\(report.faultCount) faults scheduled, \(timeline.lanes.count) plugins"
    }

    static func checkers(_ results: [CheckerResult], seed: UInt64, replay: String?) -> String {
        var rows = ""
        for result in results {
            let violations = result.violations.prefix(50).map { "<li>\(escaped($0))</li>" }.joined()
            let more = result.violations.count > 50 ? "<li>… \(result.violations.count - 50) more</li>" : ""
            rows += """
                <tr class="\(result.passed ? "pass" : "fail")" data-checker="\(result.checker.rawValue)">\
                <td>\(result.checker.rawValue)</td><td>\(result.passed ? "pass" : "FAIL")</td>\
                <td><pre>\(escaped(result.summary))</pre>\
                \(violations.isEmpty ? "" : "<ul class=\"violations\">\(violations)\(more)</ul>")</td></tr>

                """
        }
        var text = "<table id=\"checkers\"><tr><th>checker</th><th>verdict</th><th>details</th></tr>\n\(rows)</table>"
        if !results.allSatisfy(\.passed) {
            text += "\n<p class=\"fail\">Failed with seed \(seed)"
            text += replay.map { "; replay the same schedule with <code>\(escaped($0))</code></p>" } ?? ".</p>"
        }
        return text
    }

    static func faults(_ windows: [ChaosTimeline.FaultWindow]) -> String {
        guard !windows.isEmpty else { return "<p>No fault was injected.</p>" }
        var rows = ""
        for window in windows {
            let end = window.endMs.map { String(format1: $0 / 1_000, digits: 2) + " s" } ?? "—"
            let healed = window.healedByExperiment ? "healing step" : "host (restart)"
            rows += """
                <tr data-fault="\(window.index)"><td>\(window.index)</td><td class="fault-label">\(escaped(window.label))</td>\
                <td>\(String(format1: window.startMs / 1_000, digits: 2)) s</td><td>\(end)</td><td>\(healed)</td></tr>

                """
        }
        return
            "<table id=\"faults\"><tr><th>#</th><th>fault</th><th>injected</th><th>over</th><th>healed by</th></tr>\n\(rows)</table>"
    }

    static func summary(_ report: ChaosReport) -> String {
        func mib(_ bytes: Int) -> String { String(format1: Double(bytes) / 1_048_576, digits: 1) + " MiB" }
        func percentiles(_ values: [Double]) -> String {
            "\(ChaosReport.format(ChaosReport.percentile(values, 0.5))) / \(ChaosReport.format(ChaosReport.percentile(values, 0.99)))"
        }
        let kinds = report.failed.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
        let injected = report.faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        var rows: [(String, String)] = [
            ("requests sent", "\(report.sent)"), ("answered", "\(report.answered)"),
            (
                "failed with a typed error",
                "\(report.failedTotal)" + (kinds.isEmpty ? "" : " (\(kinds.joined(separator: ", ")))")
            ),
            ("lost", "\(report.lost)"), ("answer latency p50 / p99", percentiles(report.latencies)),
            (
                "faults injected",
                "\(report.faults.values.reduce(0, +))"
                    + (injected.isEmpty ? "" : " (\(injected.joined(separator: ", ")))")
            ),
            (
                "restarts",
                "\(report.restarts)"
                    + (report.failedPlugins.isEmpty
                        ? "" : " (gave up on \(report.failedPlugins.joined(separator: ", ")))")
            ),
        ]
        for kind in report.detect.keys.sorted() {
            rows.append(("\(kind): detected p50 / p99", percentiles(report.detect[kind] ?? [])))
            rows.append(("\(kind): tree restored p50 / p99", percentiles(report.restore[kind] ?? [])))
        }
        rows.append(("RSS, host and history", "\(mib(report.rssBefore)) → \(mib(report.rssAfter))"))
        rows.append(
            (
                "tree at the end",
                "\(report.instancesAtEnd) instances, "
                    + (report.finalTreeServed ? "every node served" : "some nodes unavailable")
            ))
        return "<table id=\"summary\">\n"
            + rows.map { "<tr><th>\(escaped($0.0))</th><td>\(escaped($0.1))</td></tr>\n" }.joined() + "</table>"
    }

    static let style = """
        body { font: 14px/1.45 system-ui, sans-serif; color: #1f2937; margin: 24px auto; max-width: 1200px; padding: 0 16px; }
        h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 16px; margin: 22px 0 6px; }
        header p { margin: 2px 0; } code, pre { font: 12px/1.4 ui-monospace, monospace; }
        pre { margin: 0; white-space: pre-wrap; }
        .pass { color: #047857; } .fail { color: #b91c1c; }
        h1 span { font-size: 15px; padding: 2px 8px; border-radius: 10px; border: 1px solid currentColor; }
        .chart { position: relative; height: 240px; }
        table { border-collapse: collapse; width: 100%; } th, td { text-align: left; vertical-align: top; padding: 4px 8px; }
        tr + tr > * { border-top: 1px solid #e5e7eb; } #summary th { width: 260px; font-weight: 500; }
        .violations { margin: 4px 0 0; padding-left: 18px; color: #b91c1c; } .note { color: #6b7280; font-size: 12px; }
        """
}
