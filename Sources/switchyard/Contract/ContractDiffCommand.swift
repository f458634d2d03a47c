import ArgumentParser
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// `switchyard contract diff OLD NEW`: every change between two versions of a contract, classified by a named rule.
struct ContractDiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Classify every change between two versions of a plugin's contract; fail on a breaking one.",
        discussion: """
            Each change is printed as file:line:column: SEVERITY: [RULE] /json/pointer: what changed. Breaking \
            changes are errors (status 1) unless their rule is allowed with --allow; compatible ones are notes. \
            --against FILE adds other modules' contracts: the references between them and NEW (routes of one that \
            open a type of the other) must resolve with compatible params. `switchyard contract rules` lists the \
            rules; Protocol/README.md §19.3 gives an example of each.

            Example: switchyard contract diff <(git show v1.2.0:contracts/orders.json) contracts/orders.json
            """
    )

    @Argument(help: ArgumentHelp("The contract of the last release.", valueName: "OLD"))
    var old: String

    @Argument(help: ArgumentHelp("The contract of this version.", valueName: "NEW"))
    var new: String

    @Flag(name: .long, help: "Print one JSON document on stdout instead of diagnostics.")
    var json = false

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Accept breaking changes of this rule (repeatable, or comma-separated): they are printed as warnings.",
            valueName: "RULE"))
    var allow: [String] = []

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Another module's published contract whose references to NEW, and NEW's to it, must resolve (repeatable).",
            valueName: "FILE"))
    var against: [String] = []

    func run() throws {
        let allowed = try allowedRules()
        let old = try ContractFile.read(self.old)
        let new = try ContractFile.read(self.new)
        let others = try against.map { path throws(RunFailure) in try ContractFile.read(path) }
        if old.contract.plugin.name != new.contract.plugin.name {
            // Two modules' contracts differ in everything: say so, rather than let a wrong file pass for a release.
            StandardError.write(
                "switchyard: warning: \(self.old) is plugin '\(old.contract.plugin.name)', \(self.new) is plugin '\(new.contract.plugin.name)'\n"
            )
        }
        let findings =
            ContractComparison.diff(old.contract, new.contract)
            + ContractComparison.references(of: new.contract, among: others.map(\.contract))
        func file(_ side: ContractFinding.Side) -> ContractFile {
            switch side {
            case .old: old
            case .new: new
            case .module(let name): others.first { $0.contract.plugin.name == name } ?? new
            }
        }
        let failing = findings.filter { $0.isBreaking && !allowed.contains($0.rule) }
        let breaking = findings.count(where: \.isBreaking)
        if json {
            StandardOutput.write(
                JSONWriter.string(report(findings, allowed: allowed, file: file, passed: failing.isEmpty)) + "\n")
        } else {
            for finding in findings {
                let severity: ManifestDiagnostic.Severity =
                    !finding.isBreaking ? .note : allowed.contains(finding.rule) ? .warning : .error
                let note = severity == .warning ? " (allowed: --allow \(finding.rule.rawValue))" : ""
                let diagnostic = finding.diagnostic(in: file(finding.side), severity: severity, note: note)
                // Notes stay one line each: a release adds many things, and only what breaks needs the excerpt.
                StandardOutput.write((severity == .note ? diagnostic.headline : diagnostic.description) + "\n")
            }
            var summary = "contract diff \(self.old) → \(self.new): "
            summary +=
                "\(old.contract.plugin.name) \(old.contract.plugin.version) → \(new.contract.plugin.name) \(new.contract.plugin.version): "
            summary += "\(breaking) breaking change\(breaking == 1 ? "" : "s")"
            if breaking > failing.count { summary += " (\(breaking - failing.count) allowed)" }
            summary += ", \(findings.count - breaking) compatible"
            StandardOutput.write(summary + (failing.isEmpty ? "\n" : "; failed\n"))
        }
        if !failing.isEmpty { throw ExitCode(1) }
    }

    /// The rules named by `--allow`; a name that is no rule, or a rule that breaks nothing, is a usage error.
    private func allowedRules() throws -> Set<ContractRule> {
        var rules = Set<ContractRule>()
        for name in allow.flatMap({ $0.split(separator: ",") }).map({ String($0.filter { !$0.isWhitespace }) })
        where !name.isEmpty {
            guard let rule = ContractRule(rawValue: name.uppercased()) else {
                throw ValidationError(
                    "--allow: no rule '\(name)' (breaking rules: \(ContractRule.allCases.filter(\.isBreaking).map(\.rawValue).joined(separator: ", ")))"
                )
            }
            guard rule.isBreaking else {
                throw ValidationError("--allow: \(rule.rawValue) is a compatible change; there is nothing to allow")
            }
            rules.insert(rule)
        }
        return rules
    }

    private func report(
        _ findings: [ContractFinding], allowed: Set<ContractRule>, file: (ContractFinding.Side) -> ContractFile,
        passed: Bool
    ) -> JSONValue {
        let breaking = findings.count(where: \.isBreaking)
        let allowedCount = findings.count { $0.isBreaking && allowed.contains($0.rule) }
        return [
            "old": .string(old), "new": .string(new), "passed": .bool(passed),
            "summary": [
                "breaking": .int(Int64(breaking)), "allowed": .int(Int64(allowedCount)),
                "compatible": .int(Int64(findings.count - breaking)),
            ],
            "findings": .array(
                findings.map { finding in
                    let contract = file(finding.side)
                    let position = contract.nearestPosition(of: finding.pointer)
                    return [
                        "rule": .string(finding.rule.rawValue), "breaking": .bool(finding.isBreaking),
                        "allowed": .bool(finding.isBreaking && allowed.contains(finding.rule)),
                        "file": .string(contract.path),
                        "pointer": .string(finding.pointer.description),
                        "line": position.map { .int(Int64($0.line)) } ?? .null,
                        "column": position.map { .int(Int64($0.column)) } ?? .null, "message": .string(finding.message),
                    ]
                }),
        ]
    }
}
