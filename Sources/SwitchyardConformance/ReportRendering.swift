import SwitchyardNavigation
public import SwitchyardProtocol

extension ConformanceReport {
    /// How many checks ended with each status.
    public var counts: [CheckStatus: Int] {
        results.reduce(into: [:]) { $0[$1.status, default: 0] += 1 }
    }

    /// The readable report: one line per check (status, id, spec section, summary), and under each FAIL or WARN
    /// what happened, what the spec expects, and the exchange that shows it.
    public func text() -> String {
        var out = "switchyard check-plugin: \(launch.command.joined(separator: " "))\n"
        if let plugin {
            out += "plugin '\(plugin.name)' \(plugin.version), checked as '\(launch.pluginName)'\n"
        }
        out += "\n"
        let idWidth = results.map(\.id.rawValue.count).max() ?? 0
        let sectionWidth = results.map(\.id.section.count).max() ?? 0
        for result in results {
            out +=
                "\(result.status.rawValue)  \(pad(result.id.rawValue, idWidth))  \(pad(result.id.section, sectionWidth))  \(result.summary)\n"
            for (name, value) in result.measurements {
                out += "      \(name): \(format(value)) ms\n"
            }
            for finding in result.findings {
                out += "      \(finding.severity == .fail ? "✗" : "!") \(finding.message)\n"
                if let expected = finding.expected { out += "        expected: \(expected)\n" }
                if !finding.exchange.isEmpty {
                    out += "        exchange:\n"
                    for line in finding.exchange {
                        out += "          \(line.direction == .sent ? "→" : "←") \(line.text)\n"
                    }
                }
                if !finding.stderr.isEmpty {
                    out += "        stderr (last lines):\n"
                    for line in finding.stderr { out += "          \(line)\n" }
                }
            }
        }
        if let contract {
            // What the author promises the modules it is composed with (§19), as `contract export` would write it.
            out +=
                "\ncontract (what it promises the modules it is composed with; `switchyard contract export` writes it, §19):\n  \(contract.headline)\n"
            for line in contract.summaryLines { out += "  \(line)\n" }
        }
        let counts = self.counts
        out +=
            "\n\(results.count) checks: \(counts[.pass] ?? 0) passed, \(counts[.fail] ?? 0) failed, \(counts[.warn] ?? 0) warned, \(counts[.skip] ?? 0) skipped\n"
        return out
    }

    /// One JSON document for CI: the command, the plugin, a summary and every check with its findings.
    public func json() -> JSONValue {
        let counts = self.counts
        var document: JSONObject = [
            "command": .array(launch.command.map(JSONValue.string)),
            "pluginName": .string(launch.pluginName),
            "passed": .bool(!failed),
            "summary": [
                "pass": .int(Int64(counts[.pass] ?? 0)), "fail": .int(Int64(counts[.fail] ?? 0)),
                "warn": .int(Int64(counts[.warn] ?? 0)), "skip": .int(Int64(counts[.skip] ?? 0)),
            ],
        ]
        document["plugin"] = plugin.map { ["name": .string($0.name), "version": .string($0.version)] } ?? .null
        document["contract"] = contract?.json ?? .null
        document["checks"] = .array(
            results.map { result in
                [
                    "id": .string(result.id.rawValue),
                    "section": .string(result.id.section),
                    "title": .string(result.id.title),
                    "status": .string(result.status.rawValue),
                    "summary": .string(result.summary),
                    "measurements": .array(
                        result.measurements.map {
                            ["name": .string($0.name), "milliseconds": .double($0.milliseconds)]
                        }),
                    "findings": .array(
                        result.findings.map { finding in
                            [
                                "severity": .string(finding.severity.rawValue),
                                "message": .string(finding.message),
                                "expected": finding.expected.map(JSONValue.string) ?? .null,
                                "exchange": .array(
                                    finding.exchange.map {
                                        [
                                            "direction": .string($0.direction.rawValue), "line": .string($0.text),
                                            "bytes": .int(Int64($0.bytes)),
                                        ]
                                    }),
                                "stderr": .array(finding.stderr.map(JSONValue.string)),
                            ]
                        }),
                ]
            })
        return .object(document)
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private func format(_ milliseconds: Double) -> String {
        let tenths = (milliseconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) + ".0" : String(tenths)
    }
}
