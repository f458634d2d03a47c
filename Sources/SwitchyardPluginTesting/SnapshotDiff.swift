import SwitchyardProtocol

/// A readable difference of two trees: each as indented JSON, one member per line, and the lines that differ marked
/// `−` (expected) and `+` (actual) with a few lines of context, as a unified diff.
enum SnapshotDiff {
    static func describe(expected: TreeSnapshot, actual: TreeSnapshot) -> String {
        let old = lines(of: expected)
        let new = lines(of: actual)
        let script = diff(old, new)
        var output: [String] = []
        var lastShown = -10
        for (index, line) in script.enumerated() {
            let near = script[max(0, index - 2)...min(script.count - 1, index + 2)].contains { $0.mark != " " }
            guard near else { continue }
            if index > lastShown + 1 && !output.isEmpty { output.append("  …") }
            output.append("\(line.mark) \(line.text)")
            lastShown = index
        }
        return output.isEmpty ? "  (no difference)" : output.joined(separator: "\n")
    }

    /// The instances added, removed or changed from one tree to the other.
    static func instancesChanged(from old: TreeSnapshot, to new: TreeSnapshot) -> Set<InstanceID> {
        let before = Dictionary(old.instances.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(new.instances.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }
    }

    private static func lines(of snapshot: TreeSnapshot) -> [String] {
        guard let value = try? Coding.encode(snapshot) else { return ["\(snapshot)"] }
        var lines: [String] = []
        pretty(value, indent: "", key: nil, trailingComma: false, into: &lines)
        return lines
    }

    private static func pretty(
        _ value: JSONValue, indent: String, key: String?, trailingComma: Bool, into lines: inout [String]
    ) {
        let prefix = indent + (key.map { "\"\($0)\": " } ?? "")
        let comma = trailingComma ? "," : ""
        switch value {
        case .object(let object) where !object.isEmpty:
            lines.append(prefix + "{")
            let keys = object.keys
            for (index, name) in keys.enumerated() {
                if let member = object[name] {
                    pretty(
                        member, indent: indent + "  ", key: name, trailingComma: index < keys.count - 1, into: &lines)
                }
            }
            lines.append(indent + "}" + comma)
        case .array(let array) where !array.isEmpty:
            lines.append(prefix + "[")
            for (index, element) in array.enumerated() {
                pretty(element, indent: indent + "  ", key: nil, trailingComma: index < array.count - 1, into: &lines)
            }
            lines.append(indent + "]" + comma)
        default:
            lines.append(prefix + JSONWriter.string(value) + comma)
        }
    }

    /// A line of a diff script: ` ` kept, `−` only expected, `+` only actual.
    private struct Line {
        let mark: Character
        let text: String
    }

    /// The longest common subsequence of lines, walked into a script (trees in tests are small).
    private static func diff(_ old: [String], _ new: [String]) -> [Line] {
        let n = old.count, m = new.count
        var lengths = Array(repeating: Array(repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i][j] = old[i] == new[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var script: [Line] = []
        var i = 0, j = 0
        while i < n && j < m {
            if old[i] == new[j] {
                script.append(Line(mark: " ", text: old[i]))
                i += 1
                j += 1
            } else if lengths[i + 1][j] >= lengths[i][j + 1] {
                script.append(Line(mark: "−", text: old[i]))
                i += 1
            } else {
                script.append(Line(mark: "+", text: new[j]))
                j += 1
            }
        }
        while i < n { script.append(Line(mark: "−", text: old[i])); i += 1 }
        while j < m { script.append(Line(mark: "+", text: new[j])); j += 1 }
        return script
    }
}
