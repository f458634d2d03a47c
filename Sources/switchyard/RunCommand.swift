import ArgumentParser
import Glibc
import Logging
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardUV
import Synchronization

/// `switchyard run`: starts an app from its manifest; interactive on a terminal, or runs a script.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Start an app from its manifest (the bundled demo app by default).",
        discussion: """
            On a terminal, a prompt accepts navigation commands and deep links and shows the tree after each change \
            (type 'help'). With --script, each line of the file (or of stdin with '-') is run in order, and the \
            first failure ends the run with a non-zero status and the typed error. Other clients reach the running \
            host through its control socket (switchyard open/tree/watch).
            """
    )

    @Option(name: .long, help: "The app manifest (JSON).")
    var manifest: String = "Plugins/demo/switchyard.json"

    @Option(name: .long, help: ArgumentHelp("Run the commands in FILE (or stdin: -) and exit.", valueName: "FILE"))
    var script: String?

    @Flag(name: .long, help: "Print the final tree snapshot as JSON on stdout.")
    var json = false

    @Option(name: .long, help: "The control socket's path (default: per app, in $XDG_RUNTIME_DIR or /tmp/switchyard-UID).")
    var socket: String?

    @Flag(name: .long, help: "Do not open a control socket.")
    var noSocket = false

    @Option(name: .long, help: ArgumentHelp("Keep the tree in FILE: restored at start, written (atomically) after changes.", valueName: "FILE"))
    var state: String?

    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = log.makeLogger()
        let manifest: Manifest
        do { manifest = try Manifest.load(path: self.manifest) } catch {
            throw ValidationError("\(error)")
        }
        let socketPath = noSocket ? nil : socket ?? defaultControlSocketPath(app: manifest.app ?? "switchyard")
        var options = HostOptions(handleSignals: true)
        options.controlSocket = socketPath
        options.stateFile = state
        let host: HostHandle
        do {
            host = try await HostHandle.start(manifest: manifest, options: options, logger: logger)
        } catch let error as ResponseError {
            throw RunFailure(message: "\(error.code.name) (\(error.code.rawValue)): \(error.message)")
        }
        let statuses = await host.status()
        let ready = statuses.filter { $0.state == .ready }.map(\.name)
        StandardError.write(
            "switchyard: ready (\(ready.count)/\(statuses.count) plugins: \(ready.joined(separator: ", "))) pid \(SystemProcess.currentPID)"
                + (socketPath.map { ", control socket \($0)" } ?? "") + "\n")

        var interpreter = Interpreter(host: host)
        if let script {
            exitWhenTheHostStops(host, status: 1, "the host stopped before the script finished")
            let failure = await runScript(script, &interpreter)
            if json { StandardOutput.write(TreeRenderer.json(await host.snapshot()) + "\n") }
            Self.finishing.store(true, ordering: .sequentiallyConsistent)
            await host.shutdown()
            if let failure { throw RunFailure(message: failure) }
            return
        }
        if Terminal.isTerminal(0) {
            exitWhenTheHostStops(host, status: 0, "the host stopped")
            await interactive(&interpreter, host: host)
            if json { StandardOutput.write(TreeRenderer.json(await host.snapshot()) + "\n") }
            Self.finishing.store(true, ordering: .sequentiallyConsistent)
            await host.shutdown()
            return
        }
        await host.waitUntilStopped()
        if json { StandardOutput.write(TreeRenderer.json(await host.snapshot()) + "\n") }
    }

    /// Set once the CLI itself ends the host, so the watcher below stays quiet.
    private static let finishing = Atomic(false)

    /// A signal or `switchyard shutdown` stops the host while the prompt (or a script read from stdin) is blocked
    /// reading the terminal: nothing would ever wake that read, so the process restores the terminal and exits.
    private func exitWhenTheHostStops(_ host: HostHandle, status: Int32, _ message: String) {
        Task.detached {
            await host.waitUntilStopped()
            guard !Self.finishing.load(ordering: .sequentiallyConsistent) else { return }
            Terminal.restoreAll()
            StandardError.write("\nswitchyard: \(message)\n")
            Glibc.exit(status)
        }
    }

    /// Runs every line; returns the first failure, if any.
    private func runScript(_ path: String, _ interpreter: inout Interpreter) async -> String? {
        let text: String
        if path == "-" {
            var lines: [String] = []
            while let line = readLine() { lines.append(line) }
            text = lines.joined(separator: "\n")
        } else {
            // A script is a regular file (of at most 64 MiB); `--script -` reads a pipe.
            do { text = String(decoding: try FileSystem.readRegularFile(path), as: UTF8.self) } catch {
                return "cannot read the script: \(error)"
            }
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let outcome = await interpreter.run(String(line))
            switch outcome {
            case .quiet: continue
            case .quit: return nil
            case .ok(let output, _):
                StandardOutput.write("» \(line.trimmingWhitespace)\n")
                if !output.isEmpty { StandardOutput.write(output.hasSuffix("\n") ? output : output + "\n") }
            case .failed(let message):
                StandardOutput.write("» \(line.trimmingWhitespace)\n")
                return "\(path == "-" ? "stdin" : path):\(index + 1): \(message)"
            }
        }
        return nil
    }

    private func interactive(_ interpreter: inout Interpreter, host: HostHandle) async {
        StandardOutput.write("Switchyard — type a deep link (switchyard://todos/todo/42), a command (nav, tree, status, expect…), 'help' or 'quit'. Up and down arrows browse the history.\n")
        StandardOutput.write(await host.render(.text))
        let editor = LineEditor()
        while let line = editor.read(prompt: "switchyard> ") {
            switch await interpreter.run(line) {
            case .quiet: continue
            case .quit: return
            case .ok(let output, let changed):
                if changed {
                    StandardOutput.write(output + "\n" + (await host.render(.text)))
                } else if !output.isEmpty {
                    StandardOutput.write(output.hasSuffix("\n") ? output : output + "\n")
                }
            case .failed(let message):
                StandardOutput.write("error: \(message)\n")
            }
        }
    }
}

/// A failure that ends the CLI with status 1 and the message on stderr.
struct RunFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
