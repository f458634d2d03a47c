import SwitchyardNavigation
import SwitchyardProtocol

/// The command language of the interactive prompt and of `--script` files: one command per line.
///
/// ```
/// switchyard://todos/todo/42                       open a deep link (or: open URL)
/// nav @root setRoot authenticated {"user":"alice"} a chain: steps separated by ">"
/// nav authenticated.home focusFirst todos > child > popToRoot > route todo {"id":"42"}
/// expect top todos.todos                           assertions, for scenario scripts
/// ```
struct Interpreter {
    /// The app the commands act on: the host in this process, or one reached over its control socket.
    let app: any AppSession
    private(set) var history: [String] = []

    enum Outcome {
        /// Nothing to report (a comment or a blank line).
        case quiet
        /// Done; `changed` when the tree has a new revision.
        case ok(String, changed: Bool)
        /// Failed, with the exit status a client subcommand ends with (69 when the host did not answer).
        case failed(String, status: ExitStatus = .failure)
        case quit
    }

    struct CommandError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static let help = """
        Commands (one per line; # starts a comment):
          URL | open URL                  apply a deep link, e.g. switchyard://todos/todo/42
          open --defer[=MS] URL           let a link that cannot be applied yet wait, and apply it once it can
                                          (a guard defers it, or it needs a root that is not active)
          link | link cancel [ID]         show the deep link waiting; drop it
          validate URL                    check a deep link without applying it
          nav TARGET STEP [> STEP ...]    apply a chain of steps atomically
                                          STEP is OP [NAME|NUMBER] [JSON-PARAMS]; the ops:
                                               route setRoot hasRoot focusFirst selectTab pop popLast popTo popCount
                                               popToRoot popToInitialRoute dismiss close dismissCoordinator
                                               finishFlow restart child parent top setTabs setBadge popPath
                                               popPushed popPushedToRoot forcePresent refresh
                                          route NAME as fullScreen {..}   setTabs a,b,c   setBadge TAB [TEXT]
                                          refresh ROUTE|eN (ask the owner again what it shows)
          dismissed TARGET ENTRY|top      tell the host the user dismissed an entry (swipe back, sheet dragged away)
                                          top: the top-most entry; a root is refused (notAllowed)
          action TARGET ENTRY|top NAME [JSON-PARAMS]  tell the host the user tapped a declared action on a screen
                                          (its coordinator decides where to go)
          query QUERY [TARGET [ROUTE]]    ask a read-only question about the tree
                                          QUERY: isRoot hasRoot currentRoute isInStack topCoordinator canDismiss
                                                 hasParent presentedCount
          tree [text|json|dot|mermaid]    show the tree          status    show the plugins
          expect EXPECTATION              check that the tree holds the expectation now
                                          EXPECTATION: root ROUTE | top PLUGIN.TYPE | tab TAB | revision N
                                                 | stack TARGET ROUTE,... | instances N | tabs TARGET TAB,...
                                                 | badge TAB TEXT|- | link URL|-
          expect error CODE COMMAND       the command must fail with that error (e.g. routeNotFound)
          wait [MS] EXPECTATION           wait (default 5000 ms) until a plugin's own navigation makes it hold
          history | help | quit
        TARGET: @root, @top, #ID, PLUGIN.TYPE (the first such instance, depth-first), or PLUGIN.TYPE@newest (the
                most recently created one).
        """

    mutating func run(_ rawLine: String) async -> Outcome {
        let line = rawLine.trimmingWhitespace
        if line.isEmpty || line.hasPrefix("#") { return .quiet }
        history.append(line)
        do {
            return try await execute(line)
        } catch let error as CommandError {
            return .failed(error.message)
        } catch let error as ResponseError {
            return .failed(RunFailure.describe(error))
        } catch let failure as RunFailure {
            return .failed(failure.message, status: failure.status)
        } catch {
            return .failed("\(error)")
        }
    }

    private mutating func execute(_ line: String) async throws -> Outcome {
        if line.contains("://") && !line.contains(" ") { return try await open(line) }
        let (command, rest) = line.splitFirstWord()
        switch command {
        case "help", "?": return .ok(Self.help, changed: false)
        case "quit", "exit": return .quit
        case "history":
            return .ok(
                history.enumerated().map { "\($0.offset + 1)  \($0.element)" }.joined(separator: "\n"), changed: false)
        case "open": return try await open(rest)
        case "link":
            if rest.isEmpty {
                let pending = try await app.pendingDeepLink()
                return .ok(pending.map(DeferredLinkText.describe) ?? "no deep link waits", changed: false)
            }
            let (word, id) = rest.splitFirstWord()
            guard word == "cancel", id.isEmpty || Int(id) != nil else { throw CommandError("link takes: cancel [ID]") }
            let cancelled = try await app.cancelDeepLink(id: Int(id))
            return .ok(cancelled.map { "cancelled \($0.url)" } ?? "no deep link waits", changed: false)
        case "validate":
            let result = try await app.validate(rest)
            if result.valid {
                return .ok("valid: " + (result.steps ?? []).map(Self.describe).joined(separator: " > "), changed: false)
            }
            return .ok("invalid: \(result.error?.message ?? "?")", changed: false)
        case "nav", "navigate":
            let (target, steps) = rest.splitFirstWord()
            let start = try await resolve(target)
            let parsed = try Self.parseSteps(steps)
            let before = try await app.snapshot().revision
            let result = try await app.navigate(from: start, parsed)
            return .ok(
                "revision \(result.revision), landed on \(try await label(result.instance))",
                changed: result.revision != before)
        case "dismissed":
            let (target, entryText) = rest.splitFirstWord()
            let (instance, entry) = try await entry(target, entryText, command: "dismissed")
            let result = try await app.userDismissed(instance: instance, entry: entry)
            return .ok("revision \(result.revision)", changed: true)
        case "action":
            let (target, afterTarget) = rest.splitFirstWord()
            let (entryText, afterEntry) = afterTarget.splitFirstWord()
            let (name, paramsText) = afterEntry.splitFirstWord()
            guard !name.isEmpty else { throw CommandError("action needs TARGET ENTRY|top NAME [JSON-PARAMS]") }
            let (instance, entry) = try await entry(target, entryText, command: "action")
            let params = paramsText.isEmpty ? nil : try JSONParser.parse(paramsText)
            let before = try await app.snapshot().revision
            let result = try await app.userAction(instance: instance, entry: entry, action: name, params: params)
            return .ok(
                "revision \(result.revision), landed on \(try await label(result.instance))",
                changed: result.revision != before)
        case "query":
            let words = rest.split(separator: " ").map(String.init)
            guard let first = words.first, let query = TreeQueryRequest.Query(rawValue: first) else {
                throw CommandError(
                    "query needs one of isRoot, hasRoot, currentRoute, isInStack, topCoordinator, canDismiss, hasParent, presentedCount"
                )
            }
            let instance = words.count > 1 ? try await resolve(words[1]) : nil
            let answer = try await app.query(
                .init(query: query, instance: instance, route: words.count > 2 ? words[2] : nil))
            return .ok("\(answer)", changed: false)
        case "tree":
            let format = TreeRenderRequest.Format(rawValue: rest.isEmpty ? "text" : rest) ?? .text
            return .ok(try await app.render(format), changed: false)
        case "status":
            return .ok(Self.describe(try await app.plugins()), changed: false)
        case "expect":
            try await expect(rest)
            return .ok("ok: expect \(rest)", changed: false)
        case "wait":
            try await wait(rest)
            return .ok("ok: wait \(rest)", changed: false)
        default:
            throw CommandError("unknown command '\(command)' (try: help)")
        }
    }

    /// `open [--defer[=MS]] URL`.
    private func open(_ text: String) async throws -> Outcome {
        let (first, url) = text.splitFirstWord()
        var request = OpenRequest.Params(url: text)
        if first == "--defer" || first.hasPrefix("--defer=") {
            let milliseconds = first.split(separator: "=", maxSplits: 1).dropFirst().first
            guard milliseconds == nil || milliseconds.flatMap({ Int($0) }) != nil, !url.isEmpty else {
                throw CommandError("open --defer[=MS] URL")
            }
            request = OpenRequest.Params(url: url, defer: true, deferMs: milliseconds.flatMap { Int($0) })
        }
        let before = try await app.snapshot().revision
        let result = try await app.open(request)
        let landed = "revision \(result.revision), landed on \(try await label(result.instance))"
        guard let waiting = result.deferred else {
            let replaced = result.replaced.map { "; it replaces the link that waited, \($0.url)" } ?? ""
            return .ok(landed + replaced, changed: result.revision != before)
        }
        var lines = [DeferredLinkText.describe(waiting)]
        if result.revision != before { lines.append("redirected: \(landed)") }
        if let replaced = result.replaced { lines.append("it replaces the link that waited, \(replaced.url)") }
        if let error = result.redirectError { lines.append("the redirect failed: \(error.message)") }
        return .ok(lines.joined(separator: "\n"), changed: result.revision != before)
    }

    // MARK: - Targets

    /// `@root`, `@top`, `#ID` or `PLUGIN.TYPE`.
    func resolve(_ target: String) async throws -> InstanceID {
        let tree = try await app.snapshot()
        switch target {
        case "", "@root":
            guard let root = tree.root else { throw CommandError("the tree is empty") }
            return root
        case "@top":
            guard case .int(let id) = try await app.query(.init(query: .topCoordinator)) else {
                throw CommandError("no top")
            }
            return InstanceID(id)
        default:
            if target.hasPrefix("#"), let number = Int64(target.dropFirst()) { return InstanceID(number) }
            if target.hasSuffix("@newest") {
                // The most recently created instance of the type (Stinsen's RouterStore), asked of the host.
                let parts = target.dropLast("@newest".count).split(separator: ".", maxSplits: 1).map(String.init)
                guard parts.count == 2,
                    case .int(let id) = try await app.query(.init(query: .newest, plugin: parts[0], type: parts[1]))
                else {
                    throw CommandError("no instance matches '\(target)'")
                }
                return InstanceID(id)
            }
            let parts = target.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2,
                let instance = tree.instances.first(where: { $0.plugin == parts[0] && $0.type == parts[1] })
            else {
                throw CommandError(
                    "no instance matches '\(target)' (use @root, @top, #ID, PLUGIN.TYPE or PLUGIN.TYPE@newest)")
            }
            return instance.id
        }
    }

    /// `TARGET ENTRY|top`: an entry by id (`e12` or `12`), or `top`, what the user sees on top of that instance: the
    /// last entry, else the root, the selected tab or the wrapper's child.
    private func entry(_ target: String, _ entryText: String, command: String) async throws -> (InstanceID, EntryID) {
        let instance = try await resolve(target)
        guard entryText != "top" else {
            guard let shown = try await app.snapshot().instance(instance),
                let top = shown.entries?.last ?? shown.root
                    ?? shown.tabs?.first(where: { $0.route == shown.selectedTab }) ?? shown.child
            else { throw CommandError("no instance \(target)") }
            return (instance, top.entry)
        }
        guard let number = Int64(entryText.trimmingPrefix("e")) else {
            throw CommandError("\(command) needs an entry id or 'top'")
        }
        return (instance, EntryID(number))
    }

    private func label(_ id: InstanceID) async throws -> String {
        guard let instance = try await app.snapshot().instance(id) else { return "\(id)" }
        return "\(instance.plugin).\(instance.type)\(id)"
    }

    /// One line per plugin: name, state, pid, version, restarts and why it is down.
    static func describe(_ plugins: [HostStatusRequest.Plugin]) -> String {
        plugins.map { plugin in
            var line = "\(plugin.name)  \(plugin.state)"
            if let pid = plugin.pid { line += "  pid \(pid)" }
            if let version = plugin.version { line += "  v\(version)" }
            // Whether it has a process: `running`, or `lazy`/`hibernated` (its state says so then), spec §20.
            if let residency = plugin.residency, residency != plugin.state { line += "  \(residency)" }
            if let upgrade = plugin.upgrade {
                line += "  upgrade \(upgrade.from ?? "?") → \(upgrade.to ?? "?"): \(upgrade.phase)"
            }
            if plugin.restarts > 0 { line += "  restarts \(plugin.restarts)" }
            if let error = plugin.error {
                line += "  — \(error.message)" + (error.authorDetails.map { "\n" + $0 } ?? "")
            }
            return line
        }.joined(separator: "\n")
    }

    // MARK: - Assertions

    private mutating func expect(_ text: String) async throws {
        let (what, rest) = text.splitFirstWord()
        guard what == "error" else { return try await check(text) }
        let (code, command) = rest.splitFirstWord()
        let before = try await app.snapshot().revision
        switch await run(command) {
        case .failed(let message, _):
            guard message.hasPrefix(code + " ") else { throw CommandError("expected \(code), got: \(message)") }
            let after = try await app.snapshot().revision
            guard after == before else {
                throw CommandError("the failed command changed the tree (revision \(before) → \(after))")
            }
        default:
            throw CommandError("expected '\(command)' to fail with \(code), but it succeeded")
        }
    }

    /// `wait [MS] EXPECTATION`: re-checks after every tree change (and deferred deep link change) until it holds, for
    /// navigation a plugin starts on its own (a finished registration signing the user in) or a deferred link the host
    /// applies. Fails after MS milliseconds (default 5000).
    private func wait(_ text: String) async throws {
        let (first, afterFirst) = text.splitFirstWord()
        let milliseconds = Int(first) ?? 5000
        let expectation = Int(first) == nil ? text : afterFirst
        guard !expectation.hasPrefix("error") else { throw CommandError("wait takes an expectation other than error") }
        let events = try await app.treeChanges()
        let interpreter = self
        let held = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                if (try? await interpreter.check(expectation)) != nil { return true }
                for await _ in events where (try? await interpreter.check(expectation)) != nil { return true }
                return false
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(milliseconds))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
        if !held {
            do { try await check(expectation) } catch let error as CommandError {
                throw CommandError("after \(milliseconds) ms: \(error.message)")
            }
        }
    }

    private func check(_ text: String) async throws {
        let (what, rest) = text.splitFirstWord()
        let tree = try await app.snapshot()
        switch what {
        case "root":
            let actual = tree.root.flatMap { tree.instance($0) }?.root?.route
            guard actual == rest else {
                throw CommandError("expected the root route '\(rest)', found '\(actual ?? "none")'")
            }
        case "top":
            let id = try await resolve("@top")
            let instance = tree.instance(id)
            let actual = instance.map { "\($0.plugin).\($0.type)" } ?? "?"
            guard actual == rest else {
                throw CommandError("expected the top coordinator \(rest), found \(actual)\(id)")
            }
        case "tab":
            let words = rest.split(separator: " ").map(String.init)
            let tabs =
                words.count == 2
                ? tree.instance(try await resolve(words[0])) : tree.instances.first { $0.kind == .tabs }
            guard let selected = tabs?.selectedTab, selected == words.last else {
                throw CommandError(
                    "expected the selected tab '\(words.last ?? "")', found '\(tabs?.selectedTab ?? "none")'")
            }
        case "stack":
            let (target, routes) = rest.splitFirstWord()
            let instance = tree.instance(try await resolve(target))
            let actual = (instance?.entries ?? []).map(\.route)
            let expected = routes == "-" ? [] : routes.split(separator: ",").map(String.init)
            guard actual == expected else {
                throw CommandError(
                    "expected \(target) to hold [\(expected.joined(separator: ", "))], found [\(actual.joined(separator: ", "))]"
                )
            }
        case "revision":
            guard String(tree.revision) == rest else {
                throw CommandError("expected revision \(rest), found \(tree.revision)")
            }
        case "instances":
            guard String(tree.instances.count) == rest else {
                throw CommandError("expected \(rest) instances, found \(tree.instances.count)")
            }
        case "tabs":
            let (target, names) = rest.splitFirstWord()
            let actual = (tree.instance(try await resolve(target))?.tabs ?? []).map(\.route).joined(separator: ",")
            guard actual == names else {
                throw CommandError("expected \(target) to show the tabs \(names), found \(actual)")
            }
        case "link":
            let actual = try await app.pendingDeepLink()?.url
            guard actual == (rest == "-" ? nil : rest) else {
                throw CommandError("expected the deep link waiting to be '\(rest)', found '\(actual ?? "-")'")
            }
        case "badge":
            let (tab, badge) = rest.splitFirstWord()
            let actual = tree.instances.lazy.compactMap { $0.tabs?.first { $0.route == tab } }.first?.badge
            guard actual == (badge == "-" ? nil : badge) else {
                throw CommandError("expected the tab \(tab)'s badge '\(badge)', found '\(actual ?? "-")'")
            }
        default:
            throw CommandError(
                "unknown expectation '\(what)' (root, top, tab, tabs, badge, stack, revision, instances, link, error)")
        }
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }

    /// The first word and the rest, both trimmed.
    func splitFirstWord() -> (String, String) {
        let text = trimmingWhitespace
        guard let space = text.firstIndex(where: \.isWhitespace) else { return (text, "") }
        return (String(text[..<space]), String(text[space...]).trimmingWhitespace)
    }

    func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : String(self)
    }
}
