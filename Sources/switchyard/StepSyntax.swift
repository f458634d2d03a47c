import SwitchyardProtocol

// The step syntax of `nav` (and of `validate`'s answer): `OP [NAME|NUMBER|TABS] [as TRANSITION] [JSON-PARAMS|keep]`.
extension Interpreter {
    // MARK: - Steps

    static func parseSteps(_ text: String) throws -> [NavigationStep] {
        let parts = splitSteps(text)
        guard !parts.isEmpty else { throw CommandError("nav needs at least one step") }
        return try parts.map(parseStep)
    }

    /// Splits on `>` outside JSON braces and strings.
    static func splitSteps(_ text: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var inString = false
        var escaped = false
        for character in text {
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
            } else if character == "\"" {
                inString = true
            } else if character == "{" || character == "[" {
                depth += 1
            } else if character == "}" || character == "]" {
                depth -= 1
            } else if character == ">" && depth == 0 {
                parts.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        parts.append(current)
        return parts.map(\.trimmingWhitespace).filter { !$0.isEmpty }
    }

    static func parseStep(_ text: String) throws -> NavigationStep {
        let (name, rest) = text.splitFirstWord()
        guard let op = NavigationStep.Operation(rawValue: name) else {
            throw CommandError(
                "unknown step '\(name)' (ops: \(NavigationStep.Operation.allCases.map(\.rawValue).joined(separator: " ")))"
            )
        }
        var argument = ""
        var remainder = rest
        if !rest.hasPrefix("{") {
            (argument, remainder) = rest.splitFirstWord()
        }
        if op == .setBadge {
            // `setBadge TAB [TEXT]`: the rest of the step is the badge; none clears it.
            guard !argument.isEmpty else { throw CommandError("setBadge needs a tab name") }
            return .setBadge(argument, remainder.isEmpty ? nil : remainder)
        }
        var transition: Transition?
        if remainder.hasPrefix("as ") {
            let (word, after) = String(remainder.dropFirst(3)).splitFirstWord()
            guard let chosen = Transition(rawValue: word) else {
                throw CommandError("'as' needs push, modal or fullScreen, not '\(word)'")
            }
            (transition, remainder) = (chosen, after)
        }
        var params: JSONValue?
        var keepStack: Bool?
        if remainder.hasPrefix("{") {
            do { params = try JSONParser.parse(remainder) } catch {
                throw CommandError("params of '\(name)' are not valid JSON: \(error)")
            }
        } else if remainder == "keep" {
            keepStack = true
        } else if !remainder.isEmpty {
            throw CommandError("unexpected '\(remainder)' after '\(name) \(argument)'")
        }
        func number() throws -> Int {
            guard let value = Int(argument) else { throw CommandError("'\(name)' needs a number") }
            return value
        }
        switch op {
        case .route, .setRoot, .hasRoot, .focusFirst, .forcePresent:
            guard !argument.isEmpty else { throw CommandError("'\(name)' needs a route name") }
            return NavigationStep(op: op, route: argument, params: params, keepStack: keepStack, transition: transition)
        case .setTabs:
            let tabs = argument.split(separator: ",").map(String.init)
            guard !tabs.isEmpty else {
                throw CommandError("setTabs needs the tab names, comma-separated (todos,projects,profile)")
            }
            return .setTabs(tabs)
        case .selectTab:
            guard !argument.isEmpty else { throw CommandError("selectTab needs a tab name") }
            return .selectTab(argument)
        case .pop:
            guard let entry = Int64(argument.trimmingPrefix("e")) else { throw CommandError("pop needs an entry id") }
            return .pop(EntryID(entry))
        case .refresh:
            // `refresh ROUTE` (its top-most entry) or `refresh eN` (that entry).
            if argument.hasPrefix("e"), let entry = Int64(argument.dropFirst()) {
                return .refresh(entry: EntryID(entry))
            }
            guard !argument.isEmpty else { throw CommandError("refresh needs a route name or an entry (e12)") }
            return .refresh(argument)
        case .popTo: return .popTo(try number())
        case .popCount: return .popCount(try number())
        default:
            return NavigationStep(op: op)
        }
    }

    static func describe(_ step: NavigationStep) -> String { step.summary }
}
