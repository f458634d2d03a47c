import ArgumentParser
import Glibc
import Logging
import SwitchyardClient
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem

/// Where the running host listens (`--socket PATH`, or the default path of `--app NAME`), and how the client logs.
struct ClientOptions: ParsableArguments {
    @Option(
        name: .long, help: "The host's control socket (default: the --app's socket).",
        completion: .file(extensions: ["sock"]))
    var socket: String?

    @Option(
        name: .long, help: "The app whose host to reach (its manifest's \"app\", or `run --app`).",
        completion: .custom { _, _, prefix in ClientOptions.runningApps().filter { $0.hasPrefix(prefix) } })
    var app: String = "demo"

    @Flag(
        name: .long,
        help: """
            Wait for the host however long it takes: until one listens at the socket, and for its answers. Without it \
            a client gives up at once when no host listens, and after 30 s when the host does not answer (still \
            starting its plugins?); the studio waits 30 s for a host to listen.
            """)
    var wait = false

    @Option(
        name: .long,
        help: ArgumentHelp("How long to wait for a host without --wait, in milliseconds (tests).", visibility: .hidden))
    var giveUpMs = ClientOptions.defaultGiveUpMilliseconds

    @OptionGroup var log: LogOptions

    /// How long a client waits for the host's answer, and the studio for a host, without `--wait` (the README and
    /// `--help` say 30 s).
    static let defaultGiveUpMilliseconds = 30_000

    var path: String { socket ?? defaultControlSocketPath(app: app) }

    /// The host as the messages name it: the app and its socket, or the socket given.
    var hostDescription: String { socket == nil ? "the host of app '\(app)' at \(path)" : "the host at \(path)" }

    /// How long one answer may take: as given, forever with `--wait`.
    var answerTimeoutMilliseconds: Int32 { wait ? -1 : Int32(clamping: giveUpMs) }

    /// Connects (status 69 when no host answers there); with `--wait`, first waits for a host to listen.
    func connect() throws -> ControlClient {
        let logger = log.makeLogger()
        waitForHost()
        do {
            let client = try ControlClient(path: path, timeoutMilliseconds: answerTimeoutMilliseconds)
            logger.debug("connected to the host at \(path)")
            return client
        } catch { throw unreachable(error) }
    }

    /// Connects for async calls (status 69 when no host answers there); with `--wait`, first waits for a host.
    func connectAsync() throws -> AsyncControlClient {
        let logger = log.makeLogger()
        waitForHost()
        do {
            let client = try AsyncControlClient(
                path: path, timeoutMilliseconds: wait ? nil : UInt64(clamping: max(giveUpMs, 0)))
            logger.debug("connected to the host at \(path)")
            return client
        } catch { throw unreachable(error) }
    }

    /// With `--wait`, returns once a host listens at the socket, having said once which host it waits for.
    private func waitForHost() {
        guard wait, !ControlClient.isListening(path) else { return }
        StandardError.write("switchyard: waiting for \(hostDescription) to listen (--wait: as long as it takes)\n")
        _ = Self.waitUntilListening(path, milliseconds: nil)
    }

    /// Waits until something listens at `path` (a probe every 100 ms: a socket file appears before its host listens,
    /// so there is no single event to wait for); false when `milliseconds` pass first.
    static func waitUntilListening(_ path: String, milliseconds: Int?) -> Bool {
        let deadline = milliseconds.map { ContinuousClock.now + .milliseconds($0) }
        while !ControlClient.isListening(path) {
            if let deadline, ContinuousClock.now >= deadline { return false }
            _ = Glibc.poll(nil, 0, 100)
        }
        return true
    }

    /// "30 s", "300 ms": a limit as the messages say it.
    static func describe(milliseconds: Int) -> String {
        milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(milliseconds) ms"
    }

    /// No host at the socket, in the CLI's words: which app and socket, the apps that do run, and `--wait`. A
    /// socket something listens on (a server of another user, refused) is reported as it is.
    func unreachable(_ error: ControlClient.Failure) -> RunFailure {
        guard !ControlClient.isListening(path) else { return RunFailure(.unavailable, message: error.description) }
        return RunFailure(
            .unavailable,
            message: error.description + "\n" + (socket == nil ? "  app '\(app)': " : "  ")
                + Self.otherApps(than: app) + "; --wait waits for a host to start")
    }

    /// Part of a "no host" error: the apps whose hosts run here (in the default socket folder).
    static func otherApps(than app: String) -> String {
        let running = runningApps().filter { $0 != app }.sorted()
        return running.isEmpty ? "no host runs here" : "hosts run here for " + running.joined(separator: ", ")
    }

    /// The apps whose hosts listen in the default socket folder (for shell completion of `--app`).
    static func runningApps() -> [String] {
        let folder = FileSystem.parentDirectory(of: defaultControlSocketPath(app: "x"))
        return FileSystem.listDirectory(folder).filter { $0.hasSuffix(".sock") }.map {
            String($0.dropLast(".sock".count))
        }
        .filter { UnixSocket.isListening("\(folder)/\($0).sock") }
    }
}

extension RunFailure {
    /// A host that listens but did not answer in time (status 69), and how to wait longer.
    static func noAnswer(_ error: ControlClient.Failure) -> RunFailure {
        RunFailure(
            .unavailable,
            message: error.description + " (is it still starting its plugins?); --wait waits as long as it takes")
    }
}

/// Runs one control call and turns a failure into the CLI's typed error message and status 1.
func control<T>(_ body: () throws(ControlClient.Failure) -> T) throws -> T {
    do { return try body() } catch {
        // No answer in time is the host's unavailability, not a refusal: status 69, and how to wait longer.
        if case .timeout = error { throw RunFailure.noAnswer(error) }
        throw RunFailure(message: error.withDetails)
    }
}

extension ControlClient.Failure {
    /// The description, and under it the traceback, stack or stderr lines a plugin's failure carries.
    var withDetails: String {
        if case .response(let error) = self { return error.descriptionWithDetails }
        return description
    }
}

struct OpenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open a deep link in a running host (atomic: an invalid link changes nothing).",
        discussion: """
            Prints the revision and the coordinator the link landed on; --tree prints the tree after it. With --defer a \
            link that cannot be applied yet (a guard defers it, or it needs a root that is not active: signed out) \
            waits in the host and is applied once it can be; --pending shows it, --cancel drops it.
            """)

    @Argument(help: "The deep link, e.g. switchyard://todos/todo/42.")
    var url: String?

    @Flag(name: .customLong("validate"), help: "Only check the link (a dry run); print the chain it would apply.")
    var dryRun = false

    @Flag(name: .customLong("defer"), help: "If the link cannot be applied yet, let it wait until it can.")
    var deferLink = false

    @Option(
        name: .long, help: "How long a deferred link may wait, in milliseconds (default: the manifest's, or 300000).")
    var deferMs: Int?

    @Flag(name: .long, help: "Print the deep link waiting, if any.")
    var pending = false

    @Flag(name: .long, help: "Drop the deep link waiting.")
    var cancel = false

    @Flag(name: .long, help: "Print the tree after the change.")
    var tree = false

    @OptionGroup var client: ClientOptions

    func validate() throws {
        if pending || cancel {
            guard url == nil, !(pending && cancel) else { throw ValidationError("--pending and --cancel take no link") }
        } else if url == nil {
            throw ValidationError("give the deep link to open")
        }
    }

    func run() throws {
        let connection = try client.connect()
        if pending || cancel {
            let link = try control { () throws(ControlClient.Failure) in
                cancel
                    ? try connection.call(DeepLinkCancelRequest.self, .init()).cancelled
                    : try connection.call(DeepLinkPendingRequest.self, Empty()).pending
            }
            let text =
                link.map { (cancel ? "cancelled: " : "") + DeferredLinkText.describe($0) } ?? "no deep link waits"
            StandardOutput.write(text + "\n")
            return
        }
        let url = self.url ?? ""
        if dryRun {
            let result = try control { () throws(ControlClient.Failure) in
                try connection.call(ValidateRequest.self, .init(url: url))
            }
            guard result.valid else { throw RunFailure(message: result.error?.descriptionWithDetails ?? "invalid") }
            StandardOutput.write(
                "valid: " + (result.steps ?? []).map(Interpreter.describe).joined(separator: " > ") + "\n")
            return
        }
        let request = OpenRequest.Params(url: url, defer: deferLink ? true : nil, deferMs: deferMs)
        let result = try control { () throws(ControlClient.Failure) in
            try connection.call(OpenRequest.self, request)
        }
        let snapshot = try control { () throws(ControlClient.Failure) in
            try connection.call(TreeGetRequest.self, Empty())
        }
        let landed =
            snapshot.instance(result.instance).map { "\($0.plugin).\($0.type)\(result.instance)" }
            ?? "\(result.instance)"
        if let waiting = result.deferred {
            StandardOutput.write(DeferredLinkText.describe(waiting) + "\n")
            if let error = result.redirectError { StandardOutput.write("the redirect failed: \(error.message)\n") }
        } else {
            StandardOutput.write("revision \(result.revision), landed on \(landed)\n")
        }
        if let replaced = result.replaced {
            StandardOutput.write("it replaces the link that waited, \(replaced.url)\n")
        }
        if tree { StandardOutput.write(TreeRenderer.text(snapshot)) }
    }
}

struct TreeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree", abstract: "Print a running host's navigation tree.",
        discussion: "As at the prompt: `switchyard tree mermaid` is `switchyard tree --format mermaid`.")

    static func parseFormat(_ text: String) throws -> TreeRenderRequest.Format {
        guard let format = TreeRenderRequest.Format(rawValue: text) else {
            throw ValidationError("unknown format '\(text)' (text, json, dot, mermaid)")
        }
        return format
    }

    @Argument(help: "Print the tree as text, json, dot (Graphviz) or mermaid.", transform: parseFormat)
    var positionalFormat: TreeRenderRequest.Format?

    @Option(name: .long, help: "Print the tree as text, json, dot (Graphviz) or mermaid.", transform: parseFormat)
    var format: TreeRenderRequest.Format = .text

    @OptionGroup var client: ClientOptions

    func run() throws {
        let connection = try client.connect()
        let format = positionalFormat ?? format
        let rendered = try control { () throws(ControlClient.Failure) in
            try connection.call(TreeRenderRequest.self, .init(format: format))
        }
        StandardOutput.write(rendered.text.hasSuffix("\n") ? rendered.text : rendered.text + "\n")
    }
}

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Stream a running host's tree changes (and plugin state changes) until it stops.",
        discussion: """
            Text shows the tree at each revision; --json prints each notification as one JSON-RPC line, tree/changed \
            with the whole snapshot. The host sends changes as patches (tree/subscribe deltas), applied here.
            """)

    @Flag(
        name: .long, help: "One JSON line per event: the subscription's snapshot, then each notification as received.")
    var json = false

    @Option(name: .long, help: "Stop after N tree changes.")
    var count: Int?

    @OptionGroup var client: ClientOptions

    func run() throws {
        let connection = try client.connect()
        var tree = try control { () throws(ControlClient.Failure) in try connection.watchTree() }
        emitTree(tree)
        connection.timeoutMilliseconds = -1
        var changes = 0
        while count.map({ changes < $0 }) ?? true {
            let notification: (method: String, params: JSONValue?)
            do { notification = try connection.nextNotification() } catch {
                if case .connection = error { return }  // The host stopped: the stream is over.
                throw RunFailure(message: error.description)
            }
            if notification.method == TreeChangedNotification.method {
                tree = try control { () throws(ControlClient.Failure) in
                    try ControlClient.apply(notification.params, to: tree)
                }
                changes += 1
                // What a watcher of whole snapshots would have received (the output does not depend on the wire),
                // written from the tree the patch gave, not built as a JSON value and read back.
                if json {
                    let params = try JSONValueEncoder().encodeBytes(
                        TreeChangedNotification.Params(revision: tree.revision, snapshot: tree))
                    StandardOutput.write(
                        String(
                            decoding: Message.notificationLine(method: notification.method, encodedParams: params),
                            as: UTF8.self))
                } else {
                    emitTree(tree)
                }
                continue
            }
            if json {
                StandardOutput.write(
                    String(
                        decoding: Message.notification(method: notification.method, params: notification.params)
                            .encodedLine(), as: UTF8.self))
            } else {
                describe(notification)
            }
        }
    }

    private func emitTree(_ snapshot: TreeSnapshot) {
        if json {
            StandardOutput.write(TreeRenderer.json(snapshot) + "\n")
        } else {
            StandardOutput.write(TreeRenderer.text(snapshot))
        }
    }

    /// Any other notification, as a line of text (tree changes are shown as the tree).
    private func describe(_ notification: (method: String, params: JSONValue?)) {
        let decoder = JSONValueDecoder()
        switch notification.method {
        case PluginChangedNotification.method:
            if let params = notification.params,
                let plugin = try? decoder.decode(PluginChangedNotification.Params.self, from: params)
            {
                StandardOutput.write(
                    "plugin \(plugin.name): \(plugin.state)" + (plugin.error.map { " — \($0.message)" } ?? "") + "\n")
            }
        case CoordinatorDestroyedNotification.method:
            if let params = notification.params,
                let destroyed = try? decoder.decode(CoordinatorDestroyedNotification.Params.self, from: params)
            {
                StandardOutput.write("destroyed \(destroyed.plugin).\(destroyed.type)\(destroyed.instance)\n")
            }
        default:
            StandardOutput.write("\(notification.method)\n")
        }
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show a running host's plugins.")

    @Flag(name: .long, help: "Print the host/status result as JSON.")
    var json = false

    @OptionGroup var client: ClientOptions

    func run() throws {
        let connection = try client.connect()
        let status = try control { () throws(ControlClient.Failure) in
            try connection.call(HostStatusRequest.self, Empty())
        }
        if json {
            StandardOutput.write(
                String(decoding: (try? JSONValueEncoder().encodeBytes(status)) ?? [], as: UTF8.self) + "\n")
            return
        }
        StandardOutput.write("revision \(status.revision)\n")
        if let host = status.host {
            StandardOutput.write(
                "host  pid \(host.pid)  max loop lag \(host.maxLoopLagMs) ms  stalled \(host.stalledMs) ms\n")
        }
        if let state = status.stateFile {
            let written = state.writtenRevision.map { "revision \($0)" } ?? "nothing yet"
            StandardOutput.write(
                state.failures == 0
                    ? "state  \(state.path): \(written) written\n"
                    : "state  \(state.path): NOT WRITTEN, \(state.failures) failed writes (\(state.error ?? "?")); the file holds \(written)\n"
            )
        }
        if !status.plugins.isEmpty { StandardOutput.write(Interpreter.describe(status.plugins) + "\n") }
        for issue in status.composition { StandardOutput.write("composition: \(issue.message)\n") }
    }
}

struct ShutdownCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shutdown", abstract: "Stop a running host and its plugins.")

    @OptionGroup var client: ClientOptions

    func run() throws {
        let connection = try client.connect()
        _ = try control { () throws(ControlClient.Failure) in try connection.call(HostShutdownRequest.self, Empty()) }
    }
}
