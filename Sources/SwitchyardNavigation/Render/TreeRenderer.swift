public import SwitchyardProtocol

/// Renders a tree snapshot as indented text, JSON, Graphviz DOT or Mermaid.
public enum TreeRenderer {
    public static func render(_ snapshot: TreeSnapshot, format: TreeRenderRequest.Format) -> String {
        switch format {
        case .text: text(snapshot)
        case .json: json(snapshot)
        case .dot: dot(snapshot)
        case .mermaid: mermaid(snapshot)
        }
    }

    /// The snapshot's JSON, deterministic (same tree, same bytes).
    public static func json(_ snapshot: TreeSnapshot) -> String {
        (try? JSONValueEncoder().encode(snapshot)).map(JSONWriter.string) ?? "{}"
    }

    // MARK: Text

    /// Indented text, e.g.
    /// ```
    /// main.main#1 stack  (revision 7)
    /// └─ root authenticated ⇒ authenticated.tabs#2 tabs
    ///    ├─ tab todos ● ⇒ todos.navigation#3 wrapper
    /// ```
    public static func text(_ snapshot: TreeSnapshot) -> String {
        guard let root = snapshot.root, let instance = snapshot.instance(root) else {
            return "(empty tree, revision \(snapshot.revision))\n"
        }
        var lines = ["\(label(instance))  (revision \(snapshot.revision))"]
        let index = Dictionary(uniqueKeysWithValues: snapshot.instances.map { ($0.id, $0) })
        func children(_ instance: InstanceSnapshot, _ prefix: String, _ depth: Int) {
            let entries = rows(instance)
            for (position, row) in entries.enumerated() {
                let last = position == entries.count - 1
                let branch = prefix + (last ? "└─ " : "├─ ")
                let nextPrefix = prefix + (last ? "   " : "│  ")
                switch row.entry.content {
                case .screen(let screen):
                    lines.append(branch + "\(row.title) → \(screenText(screen))")
                case .coordinator(let id):
                    guard let child = index[id], depth < 1_000 else {
                        lines.append(branch + "\(row.title) ⇒ missing instance \(id)")
                        continue
                    }
                    lines.append(branch + "\(row.title) ⇒ \(label(child))")
                    children(child, nextPrefix, depth + 1)
                }
            }
        }
        children(instance, "", 0)
        return lines.joined(separator: "\n") + "\n"
    }

    private struct Row {
        let title: String
        let entry: EntrySnapshot
    }

    private static func rows(_ instance: InstanceSnapshot) -> [Row] {
        switch instance.kind {
        case .stack:
            let root = instance.root.map { [Row(title: "root \(routeText($0))", entry: $0)] } ?? []
            return root
                + (instance.entries ?? []).map {
                    Row(
                        title:
                            "\($0.transition.rawValue) \(routeText($0)) [\($0.entry)]\(presentationText($0.presentation))",
                        entry: $0)
                }
        case .tabs:
            return (instance.tabs ?? []).map {
                Row(
                    title:
                        "tab \($0.route)\($0.badge.map { " (\($0))" } ?? "")\($0.route == instance.selectedTab ? " ●" : "")",
                    entry: $0)
            }
        case .wrapper:
            return instance.child.map { [Row(title: "child", entry: $0)] } ?? []
        case nil:
            return []
        }
    }

    /// ` {detents: medium,large; no interactive dismiss; transition: zoom}`, or nothing without options.
    private static func presentationText(_ options: PresentationOptions?) -> String {
        guard let options else { return "" }
        var parts: [String] = []
        if let detents = options.detents { parts.append("detents: \(detents.joined(separator: ","))") }
        if options.interactiveDismissDisabled == true { parts.append("no interactive dismiss") }
        if let custom = options.customTransition { parts.append("transition: \(custom)") }
        return parts.isEmpty ? "" : " {\(parts.joined(separator: "; "))}"
    }

    private static func label(_ instance: InstanceSnapshot) -> String {
        var text = "\(instance.plugin).\(instance.type)\(instance.id) \(instance.kind?.rawValue ?? "pending")"
        if instance.status == .unavailable { text += "  [unavailable: \(instance.unavailableReason ?? "plugin down")]" }
        return text
    }

    private static func routeText(_ entry: EntrySnapshot) -> String {
        guard let params = entry.params, params != .null else { return entry.route }
        return "\(entry.route)\(params)"
    }

    private static func screenText(_ screen: ScreenDescriptor) -> String {
        guard let props = screen.props, props != .null, props != .object(JSONObject()) else { return screen.name }
        return "\(screen.name) \(props)"
    }

    // MARK: Graphviz DOT

    public static func dot(_ snapshot: TreeSnapshot) -> String {
        var lines = [
            "digraph switchyard {", "  rankdir=LR;", "  node [fontname=\"Helvetica\", fontsize=11];",
            "  label=\"revision \(snapshot.revision)\";",
        ]
        for instance in snapshot.instances {
            let style = instance.status == .unavailable ? ", style=dashed, color=red" : ""
            lines.append("  i\(instance.id.rawValue) [shape=box, label=\"\(escape(label(instance)))\"\(style)];")
            for row in rows(instance) {
                switch row.entry.content {
                case .coordinator(let id):
                    lines.append("  i\(instance.id.rawValue) -> i\(id.rawValue) [label=\"\(escape(row.title))\"];")
                case .screen(let screen):
                    let node = "s\(row.entry.entry.rawValue)"
                    lines.append("  \(node) [shape=note, label=\"\(escape(screenText(screen)))\"];")
                    lines.append("  i\(instance.id.rawValue) -> \(node) [label=\"\(escape(row.title))\"];")
                }
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: Mermaid

    public static func mermaid(_ snapshot: TreeSnapshot) -> String {
        var lines = ["flowchart LR"]
        for instance in snapshot.instances {
            lines.append("  i\(instance.id.rawValue)[\"\(mermaidEscape(label(instance)))\"]")
            if instance.status == .unavailable {
                lines.append("  style i\(instance.id.rawValue) stroke-dasharray: 5 5,stroke:#c00")
            }
            for row in rows(instance) {
                switch row.entry.content {
                case .coordinator(let id):
                    lines.append("  i\(instance.id.rawValue) -->|\"\(mermaidEscape(row.title))\"| i\(id.rawValue)")
                case .screen(let screen):
                    let node = "s\(row.entry.entry.rawValue)"
                    lines.append("  \(node)([\"\(mermaidEscape(screenText(screen)))\"])")
                    lines.append("  i\(instance.id.rawValue) -->|\"\(mermaidEscape(row.title))\"| \(node)")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    private static func mermaidEscape(_ text: String) -> String {
        var result = ""
        for character in text {
            result += character == "\"" ? "#quot;" : String(character)
        }
        return result
    }
}
