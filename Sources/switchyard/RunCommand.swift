import ArgumentParser
import Glibc
import Logging
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import Synchronization

/// `switchyard run`: starts an app from its manifest; interactive on a terminal, or runs a script.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Start an app from its manifest (the bundled demo app by default).",
        discussion: """
            On a terminal, a prompt accepts navigation commands and deep links and shows the tree after each change \
            (type 'help'; Tab completes, Ctrl-C clears the line, Ctrl-D or 'quit' exits). With --script, each line \
            of the file (or of stdin with '-') is run in order, and the first failure ends the run with status 1 and \
            the typed error. Other clients reach the running host through its control socket (switchyard open, nav, \
            tree, watch...).
            """
    )

    @OptionGroup var manifestOptions: ManifestOptions

    @Option(
        name: .long, help: ArgumentHelp("Run the commands in FILE (or stdin: -) and exit.", valueName: "FILE"),
        completion: .file())
    var script: String?

    @Flag(
        name: .long,
        help:
            "Print the final tree snapshot as JSON on stdout, and nothing else there (a script's transcript goes to stderr)."
    )
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run the app under this name instead of the manifest's \"app\" (it names the control socket): a second copy beside the first.",
            valueName: "NAME"))
    var app: String?

    @Option(
        name: .long, help: "The control socket's path (default: per app, in $XDG_RUNTIME_DIR or /tmp/switchyard-UID).")
    var socket: String?

    @Flag(name: .long, help: "Do not open a control socket.")
    var noSocket = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep the tree in FILE: restored at start, written (atomically) after changes.", valueName: "FILE"),
        completion: .file())
    var state: String?

    @Flag(
        name: .long,
        help:
            "If the --state file cannot be written (a missing or read-only folder), run without persistence instead of refusing to start."
    )
    var stateOptional = false

    @OptionGroup var traceOptions: TraceOptions

    @Flag(
        name: .long, help: "Also serve the Switchyard Studio (the app in a browser, with an inspector); prints its URL."
    )
    var studio = false

    @OptionGroup var studioOptions: StudioOptions

    @Flag(
        name: .long,
        help:
            "Take fault injection from control clients (plugin/signal, plugin/restart) and show the studio's fault buttons."
    )
    var allowFaults = false

    @OptionGroup var log: LogOptions

    func validate() throws {
        if let app,
            app.isEmpty || app.hasPrefix(".") || !app.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) })
        {
            throw ValidationError("--app '\(app)' must be letters, digits, '.', - or _ (it names the control socket)")
        }
        if studio && noSocket {
            throw ValidationError("--studio needs the control socket (it is a client of it): drop --no-socket")
        }
    }

    func run() async throws {
        // This process is the host: big snapshots must not leave its heap at their high-water mark.
        SystemProcess.keepLargeBlocksOutOfHeap()
        let logger = log.makeLogger()
        var manifest = try manifestOptions.load()
        for warning in manifest.warnings { StandardError.write(warning.description + "\n") }
        if let app { manifest.app = app }
        let appName = manifest.app ?? "switchyard"
        let socketPath = noSocket ? nil : socket ?? defaultControlSocketPath(app: appName)
        var options = HostOptions(handleSignals: true)
        options.controlSocket = socketPath
        options.stateFile = try usableStateFile(logger)
        let trace = try traceOptions.makeWriter(logger: logger)
        // Whatever ends the run, what the trace still has queued reaches the file.
        defer { trace?.close() }
        options.trace = trace
        options.allowFaults = allowFaults
        // Found before the host starts: a missing studio must not leave a started host behind.
        let studioExecutable = studio ? try StudioLauncher.executable() : nil
        let host: HostHandle
        do {
            host = try await HostHandle.start(manifest: manifest, options: options, logger: logger)
        } catch let error as ResponseError {
            throw startFailure(error, app: appName, socket: socketPath)
        } catch {
            // No loop or no thread for it: nothing a manifest or a flag can fix.
            throw RunFailure(.software, message: "cannot start the host: \(error)")
        }
        let statuses = await host.status()
        let ready = statuses.filter { $0.state == .ready }.map(\.name)
        let readiness =
            "ready (\(ready.count)/\(statuses.count) plugins: \(ready.joined(separator: ", "))) pid \(SystemProcess.currentPID)"
            + (socketPath.map { ", control socket \($0)" } ?? "")
        // A collector reading JSON lines gets this as one of them; a person, as the line that says "go".
        if log.logFormat == .json {
            logger.notice("\(readiness)")
        } else {
            StandardError.write("switchyard: \(readiness)\n")
        }
        // Ends with this process (its stdin is ours); stopped first when the run ends normally.
        var studioProcess: ChildProcess?
        if let studioExecutable, let socketPath {
            do {
                studioProcess = try StudioLauncher.start(
                    studioExecutable, socket: socketPath, port: studioOptions.port, portOption: "--studio-port",
                    allowFaults: allowFaults,
                    page: studioOptions.page,
                    output: { LogOutput.write($0) })
            } catch {
                await host.shutdown()
                throw error
            }
        }
        defer { if let studioProcess { StudioLauncher.stop(studioProcess) } }

        var interpreter = Interpreter(app: host)
        if let script {
            exitWhenTheHostStops(host, trace: trace, status: 1, "the host stopped before the script finished")
            let failure = await runScript(script, &interpreter)
            if json { StandardOutput.write(TreeRenderer.json(await host.snapshot()) + "\n") }
            Self.finishing.store(true, ordering: .sequentiallyConsistent)
            await host.shutdown()
            if let failure { throw failure }
            return
        }
        if Terminal.isTerminal(0) {
            exitWhenTheHostStops(host, trace: trace, status: 0, "the host stopped")
            await Prompt(host: host).run(&interpreter)
            if json { StandardOutput.write(TreeRenderer.json(await host.snapshot()) + "\n") }
            Self.finishing.store(true, ordering: .sequentiallyConsistent)
            await host.shutdown()
            return
        }
        await host.waitUntilStopped()
        if json { StandardOutput.write(TreeRenderer.json(await host.snapshot()) + "\n") }
    }

    /// The state file to use, after checking it can be written: the user asked for persistence, so a folder that
    /// is missing or read-only refuses the start (status 73) rather than failing at the first write, unless
    /// `--state-optional` says to go on without.
    private func usableStateFile(_ logger: Logger) throws -> String? {
        guard let state else { return nil }
        do {
            // A folder at the path is set aside at start like any state file that cannot be used (§17), and the app
            // starts: what must hold is that its folder takes the new file (probed beside it).
            try FileSystem.checkReplaceable(FileSystem.isDirectory(state) ? state + ".new" : state)
            return state
        } catch {
            let folder = FileSystem.parentDirectory(of: state)
            let reason =
                error.isNotFound
                ? "the folder \(folder) does not exist" : "the folder \(folder) is not writable (\(error.name))"
            if stateOptional {
                logger.warning(
                    "running without persistence (--state-optional): cannot keep the state in \(state): \(reason)")
                return nil
            }
            throw RunFailure(
                .cannotCreate,
                message: """
                    cannot keep the state in \(state): \(reason)
                      create the folder or choose another --state FILE; --state-optional runs without persistence
                    """)
        }
    }

    /// Why the host did not start, with what to do: another host on the socket is named by its pid, with how to run
    /// this one beside it.
    private func startFailure(_ error: ResponseError, app: String, socket: String?) -> RunFailure {
        if case .object(let data)? = error.data, data["listenerPid"] != nil {
            let stop = self.socket.map { "switchyard shutdown --socket \($0)" } ?? "switchyard shutdown --app \(app)"
            return RunFailure(
                .unavailable,
                message: """
                    \(error.message)
                      stop that host (`\(stop)`), or run this app beside it under another name (`switchyard run --app NAME`) or socket (`--socket PATH`)
                    """)
        }
        // The root plugin's own failure was logged where it happened, with its place in the manifest: said once.
        if error.code == .pluginUnavailable, case .object(let data)? = error.data, data["cause"] != nil,
            let plugin = data["plugin"]?.stringValue
        {
            return RunFailure(
                .unavailable,
                message: "the app cannot start: its root plugin '\(plugin)' did not start (the error above)")
        }
        return RunFailure(.unavailable, message: "the app cannot start: \(RunFailure.describe(error))")
    }

    /// Set once the CLI itself ends the host, so the watcher below stays quiet.
    private static let finishing = Atomic(false)

    /// A signal or `switchyard shutdown` stops the host while the prompt (or a script read from stdin) is blocked
    /// reading the terminal: nothing would ever wake that read, so the process restores the terminal and exits.
    private func exitWhenTheHostStops(_ host: HostHandle, trace: TraceWriter?, status: Int32, _ message: String) {
        Task.detached {
            await host.waitUntilStopped()
            guard !Self.finishing.load(ordering: .sequentiallyConsistent) else { return }
            trace?.close()
            Terminal.restoreAll()
            StandardError.write("\nswitchyard: \(message)\n")
            Glibc.exit(status)
        }
    }

    /// Runs every line; returns the first failure, if any. The transcript goes to stdout, or with `--json` to
    /// stderr, so that stdout holds the JSON document alone (`… --json | jq`).
    private func runScript(_ path: String, _ interpreter: inout Interpreter) async -> RunFailure? {
        let toStderr = json
        func transcript(_ text: String) {
            if toStderr { StandardError.write(text) } else { StandardOutput.write(text) }
        }
        let text: String
        if path == "-" {
            var lines: [String] = []
            while let line = readLine() { lines.append(line) }
            text = lines.joined(separator: "\n")
        } else {
            // A script is a regular file (of at most 64 MiB); `--script -` reads a pipe.
            do { text = String(decoding: try FileSystem.readRegularFile(path), as: UTF8.self) } catch {
                return RunFailure(.noInput, message: "cannot read the script: \(error)")
            }
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let outcome = await interpreter.run(String(line))
            switch outcome {
            case .quiet: continue
            case .quit: return nil
            case .ok(let output, _):
                transcript("» \(line.trimmingWhitespace)\n")
                if !output.isEmpty { transcript(output.hasSuffix("\n") ? output : output + "\n") }
            case .failed(let message, _):
                transcript("» \(line.trimmingWhitespace)\n")
                return RunFailure(message: "\(path == "-" ? "stdin" : path):\(index + 1): \(message)")
            }
        }
        return nil
    }
}
