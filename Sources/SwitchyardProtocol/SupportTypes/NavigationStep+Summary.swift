extension NavigationStep {
    /// The step as the CLI's `nav` writes it: `route todo {"id":"42"}`, `setBadge todos 3`, `pop 12`.
    public var summary: String {
        var text = op.rawValue
        if let route = route ?? tab { text += " \(route)" }
        if let tabs { text += " \(tabs.joined(separator: ","))" }
        if let badge { text += " \(badge)" }
        if let transition { text += " as \(transition.rawValue)" }
        if let index { text += " \(index)" }
        if let count { text += " \(count)" }
        if let entry { text += " \(entry.rawValue)" }
        if let params { text += " \(params)" }
        return text
    }
}
