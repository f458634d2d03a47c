import ArgumentParser

/// A plugin name and what it becomes in each language's conventions: `order-history` is the plugin
/// `order-history`, the stack type `orderHistory`, the Swift classes `OrderHistory…Coordinator`, the screens
/// `OrderHistoryHome`… and the Python module `order_history`.
struct PluginNames {
    /// The manifest's name for the plugin, which routes of other plugins target.
    let plugin: String
    /// The stack coordinator type, in the route table (lower camel case, like the SDKs' defaults).
    let type: String
    /// Upper camel case: class names, and the prefix that keeps this plugin's screen names apart from others'.
    let pascal: String
    /// The Python module (a file name Python can import).
    let snake: String

    init(_ name: String) throws {
        let words = name.split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
        let isWord = { (word: String) in
            word.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }
        }
        guard let first = words.first?.unicodeScalars.first, ("a"..."z").contains(first), words.allSatisfy(isWord),
            words.joined().count + words.count - 1 == name.count
        else {
            throw ValidationError(
                "the plugin name '\(name)' must be lowercase letters and digits, starting with a letter, words joined by one '-' or '_' (e.g. orders, order-history)"
            )
        }
        let capitalized = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }
        plugin = name
        type = words[0] + capitalized.dropFirst().joined()
        pascal = capitalized.joined()
        snake = words.joined(separator: "_")
    }
}

/// Everything `switchyard init plugin` writes, as text. The same app in every language: one stack type (`home`
/// root, `item` pushed with an integer `id` at `item/:id`, a `settings` modal), wrapped per ``PluginKind``; so the
/// manifest and the scenario differ only in the command that starts the plugin.
struct PluginTemplate {
    let names: PluginNames
    let kind: PluginKind
    let sdk: SDKSource

    /// The type the app starts from: the stack itself, or the tabs or wrapper type around it.
    var rootType: String {
        switch kind {
        case .stack: names.type
        case .tabs: names.type + "Tabs"
        case .wrapper: names.type + "Navigation"
        }
    }

    /// `PLUGIN.TYPE` of the stack, as the script language names an instance.
    var stackTarget: String { "\(names.plugin).\(names.type)" }

    /// The deep-link prefix that reaches the stack from the root: the tab's segment, or nothing.
    var linkPrefix: String { kind == .tabs ? "browse/" : "" }

    /// The checkout folder, when the SDK comes from one.
    var checkout: String? {
        if case .checkout(let path) = sdk { return path }
        return nil
    }

    func files(for language: PluginLanguage) -> [GeneratedFile] {
        let code: [GeneratedFile]
        switch language {
        case .swift: code = swiftFiles
        case .python: code = pythonFiles
        case .node: code = nodeFiles
        }
        return code + contractFiles(for: language)
    }

    /// The commands that take the new folder to a plugin running in an app, in order.
    func nextSteps(for language: PluginLanguage, directory: String) -> [String] {
        let run = "switchyard run --manifest switchyard.json --script scenario.txt   # or without --script, interactive"
        let check = "switchyard check-plugin --manifest-entry switchyard.json:\(names.plugin)   # the protocol, checked"
        let contract = "ci/contract-check.sh   # \(contractPath) current, nothing broken since the last release tag"
        switch language {
        case .swift:
            return ["cd \(directory)", "swift build && swift test", run, check, contract]
        case .python:
            return [
                "cd \(directory)",
                "python3 -m venv .venv && . .venv/bin/activate   # once; Debian: apt-get install python3-venv",
                "pip install \(checkout ?? "SWITCHYARD")/Protocol/sdk/python",
                "python3 -m unittest", run, check, contract,
            ]
        case .node:
            return ["cd \(directory)", "npm install && npm test", run, check, contract]
        }
    }

    // MARK: - The app: a manifest and a scenario

    /// An app of this plugin alone, starting from ``rootType``. Strict: while a plugin is being written, a route
    /// table that does not compose should stop the start with the reason, not start an app without the plugin.
    func manifest(command: [String]) -> String {
        let argv = command.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            {
              "app": "\(names.plugin)",
              "root": {"plugin": "\(names.plugin)", "type": "\(rootType)"},
              "strict": true,
              "plugins": [
                {"name": "\(names.plugin)", "command": [\(argv)]}
              ]
            }

            """
    }

    /// What a user does in the app, with the expectations that must hold after each step.
    var scenario: String {
        let start: String
        switch kind {
        case .stack:
            start = """
                # The app starts on the stack's root screen.
                expect root home
                expect stack \(stackTarget) -
                """
        case .tabs:
            start = """
                # The app starts on the first tab, the \(names.plugin) stack at its root; a link to a tab selects it.
                expect tab browse
                expect top \(stackTarget)
                switchyard://about
                expect tab about
                nav \(names.plugin).\(rootType) selectTab browse
                expect tab browse
                """
        case .wrapper:
            start = """
                # The app starts in the wrapper, whose child is the stack; links pass through the wrapper.
                expect top \(stackTarget)
                expect stack \(stackTarget) -
                """
        }
        return """
            # A scenario for the \(names.plugin) plugin, in the app of switchyard.json:
            #
            #   switchyard run --manifest switchyard.json --script scenario.txt
            #
            # Each line is what you would type at the interactive prompt ('help' lists the commands); the first command
            # that fails or `expect` that does not hold ends the run with a non-zero status and its line number.

            \(start)

            # A deep link pushes an item: the host converts "42" to the integer the route declares.
            switchyard://\(linkPrefix)item/42
            expect stack \(stackTarget) item
            # Not an integer: the host refuses the link without asking the plugin, and nothing changes.
            expect error deepLinkInvalid switchyard://\(linkPrefix)item/forty-two
            # The plugin's guard refuses item 0: a refused link changes nothing either.
            expect error rejectedByGuard switchyard://\(linkPrefix)item/0

            # The settings modal over the item, dismissed, then back to the root.
            switchyard://\(linkPrefix)settings
            expect stack \(stackTarget) item,settings
            nav \(stackTarget) dismiss
            expect stack \(stackTarget) item
            nav \(stackTarget) popToRoot
            expect stack \(stackTarget) -
            tree

            """
    }
}
