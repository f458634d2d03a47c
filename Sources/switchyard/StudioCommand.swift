import ArgumentParser
import Dispatch
import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardSystem
import Synchronization

/// Starts `switchyard-studio` (the web server, a separate executable so that this process, which may be the host,
/// never links SwiftNIO) as a child pointed at a host's control socket. It talks to the host only through that
/// socket, as any client. Its stdin is a pipe from this process: when this process ends, however it ends, the
/// studio reads end of file and exits.
enum StudioLauncher {
    /// `$SWITCHYARD_STUDIO` when set (a packager's layout, or a test pointing a release CLI at the debug Studio it
    /// built); else, for a `switchyard` built in a source checkout, the Studio package's own build there
    /// (``buildInCheckout(_:)``: built on first use, since no other build compiles SwiftNIO and Hummingbird, and
    /// again when older than this executable); else `switchyard-studio` beside this executable (as an install lays
    /// them out), else on `PATH`. The checkout comes before "beside": a checkout built before the Studio had a
    /// package of its own keeps a `switchyard-studio` of that time beside the CLI, which would be started forever.
    static func executable() throws -> String {
        if let named = SystemProcess.environmentValue("SWITCHYARD_STUDIO"), !named.isEmpty {
            guard FileSystem.isExecutable(named) else {
                throw RunFailure(
                    .unavailable,
                    message: """
                        cannot start the studio: SWITCHYARD_STUDIO names \(named), which is not an executable file \
                        (unset it to use the switchyard-studio beside this executable or on PATH)
                        """)
            }
            return named
        }
        if let checkout = checkout() { return try buildInCheckout(checkout) }
        let beside = SystemProcess.executablePath.map { "\(FileSystem.parentDirectory(of: $0))/switchyard-studio" }
        if let beside, FileSystem.exists(beside) { return beside }
        if let found = FileSystem.findExecutable("switchyard-studio", path: SystemProcess.environmentValue("PATH")) {
            return found
        }
        throw RunFailure(
            .unavailable,
            message: """
                cannot start the studio: switchyard-studio is not beside \(SystemProcess.executablePath ?? "switchyard") \
                nor on PATH (put it there, or set SWITCHYARD_STUDIO to its path)
                """)
    }

    /// The source checkout whose `.build` holds this executable (its root), and the configuration it was built in
    /// (`debug` or `release`); nil for an installed `switchyard`, and for one copied elsewhere inside a checkout
    /// (only its own `.build` makes it that checkout's).
    static func checkout() -> (root: String, configuration: String)? {
        guard let executable = SystemProcess.executablePath else { return nil }
        let products = FileSystem.parentDirectory(of: executable)
        let configuration = products.hasSuffix("/release") ? "release" : "debug"
        var directory = products
        // `.build/<triple>/<configuration>`: the checkout is a few levels up.
        for _ in 0..<5 {
            directory = FileSystem.parentDirectory(of: directory)
            if products.hasPrefix(directory + "/.build/"),
                FileSystem.exists("\(directory)/Sources/Studio/Package.swift")
            {
                return (directory, configuration)
            }
        }
        return nil
    }

    /// The Studio's executable in `checkout`, built first when it is not there yet (a few minutes on a small
    /// machine, once: SwiftNIO and Hummingbird are compiled for it alone), and built again when it is older than
    /// this executable or than a file of `Sources/Studio`: a checkout pulled and rebuilt would otherwise start the
    /// Studio of before the pull (an incremental build, seconds when nothing changed). Built under the checkout's own `.build` (`.build/studio`),
    /// not in `Sources/Studio/.build`: the 28 packages it checks out stay out of `Sources`, where `grep -r` and
    /// linters look.
    static func buildInCheckout(_ checkout: (root: String, configuration: String)) throws -> String {
        let built = "\(checkout.root)/.build/studio/\(checkout.configuration)/switchyard-studio"
        let command = [
            "swift", "build", "--package-path", "\(checkout.root)/Sources/Studio", "--scratch-path",
            "\(checkout.root)/.build/studio", "-c", checkout.configuration, "--product", "switchyard-studio",
        ]
        if let studio = FileSystem.modificationTime(built) {
            let cli = SystemProcess.executablePath.flatMap(FileSystem.modificationTime) ?? Int64.min
            if studio >= max(cli, newestFile(in: "\(checkout.root)/Sources/Studio")) { return built }
            StandardError.write(
                "the studio is older than this switchyard or its sources: building it again (seconds if unchanged)\n")
        } else {
            StandardError.write(
                "the studio is built on first use, once (a few minutes on 2 cores): \(command.joined(separator: " "))\n"
            )
        }
        let result: SystemProcess.Completed
        do { result = try SystemProcess.run(command, timeoutMilliseconds: 1_800_000) } catch {
            throw RunFailure(
                .unavailable, message: "cannot build the studio (\(command.joined(separator: " "))): \(error)")
        }
        guard result.status == 0, FileSystem.exists(built) else {
            throw RunFailure(
                .unavailable,
                message: """
                    building the studio failed (\(command.joined(separator: " ")), status \(result.status); if SwiftPM \
                    says inputs are missing, remove \(checkout.root)/.build/studio and try again):
                    \(result.text.suffix(2_000))
                    """)
        }
        // SwiftPM leaves an executable whose inputs did not change as it was: without this, a Studio older than
        // the CLI would be built again (seconds of planning) at every start.
        try? FileSystem.touch(built)
        return built
    }

    /// The modification time of the newest file under `folder`, hidden folders (`.build`, `.swiftpm`) left out;
    /// `depth` bounds a walk that a symbolic link could make endless.
    static func newestFile(in folder: String, depth: Int = 8) -> Int64 {
        var newest = Int64.min
        for name in FileSystem.listDirectory(folder) where !name.hasPrefix(".") {
            let path = "\(folder)/\(name)"
            if FileSystem.isDirectory(path) {
                if depth > 0 { newest = max(newest, newestFile(in: path, depth: depth - 1)) }
            } else {
                newest = max(newest, FileSystem.modificationTime(path) ?? newest)
            }
        }
        return newest
    }

    /// Starts the studio (``executable()``) for the host at `socket` and waits until it serves: its output lines
    /// (the URL first) go to `output`, its errors to stderr.
    ///
    /// - Parameter portOption: the option the user set `port` with, named in the studio's hint when it is in use.
    /// - Throws: a ``RunFailure`` with the studio's own exit status when it ended before serving (its message,
    ///   already on stderr, says why: a port in use is status 69), or when it cannot be started at all.
    static func start(
        _ executable: String, socket: String, port: Int, portOption: String, allowFaults: Bool, page: String?,
        output: @escaping @Sendable (String) -> Void
    ) throws -> ChildProcess {
        var arguments = [
            executable, "--socket", socket, "--port", "\(port)", "--port-option=\(portOption)", "--exit-with-stdin",
        ]
        if allowFaults { arguments.append("--allow-faults") }
        if let page { arguments += ["--page", page] }
        // Signalled once: by the first line (the URL: the port is bound) or by the end of its output (it ended).
        let started = DispatchSemaphore(value: 0)
        let signalled = Atomic(false)
        let serving = Atomic(false)
        let child: ChildProcess
        do {
            child = try ChildProcess(
                arguments, environment: SystemProcess.environment,
                onStdout: { line in
                    if let line {
                        output(line + "\n")
                        serving.store(true, ordering: .releasing)
                    }
                    if !signalled.exchange(true, ordering: .acquiringAndReleasing) { started.signal() }
                },
                onStderr: { line in if let line { StandardError.write(line + "\n") } })
        } catch {
            throw RunFailure(.unavailable, message: "cannot start the studio (\(arguments[0])): \(error)")
        }
        // Bounded: a studio that neither serves nor ends (it cannot, short of a bug) must not hang the command.
        if started.wait(timeout: .now() + .seconds(30)) == .timedOut {
            stop(child)
            throw RunFailure(
                .unavailable, message: "the studio (\(executable)) printed no URL within 30 s; it was stopped")
        }
        if serving.load(ordering: .acquiring) { return child }
        // It ended before serving; its message is on stderr already, and one message per failure is enough.
        let status = child.waitForExit(milliseconds: 5_000) ?? ExitStatus.unavailable.rawValue
        throw RunFailure.silent(ExitStatus(rawValue: status).flatMap { $0 == .success ? nil : $0 } ?? .unavailable)
    }

    static func validate(port: Int, option: String) throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("\(option) \(port) is not a TCP port (0 picks a free one)")
        }
    }

    /// Ends the studio: end of file on its stdin, then SIGTERM if it has not gone within a second.
    static func stop(_ studio: ChildProcess) {
        studio.closeStdin()
        if studio.waitForExit(milliseconds: 1_000) == nil {
            studio.signal(SIGTERM)
            _ = studio.waitForExit(milliseconds: 2_000)
        }
    }
}

/// `--studio-port` and `--studio-page` of `switchyard run --studio`.
struct StudioOptions: ParsableArguments {
    @Option(name: .customLong("studio-port"), help: "The studio's TCP port on 127.0.0.1 (default: a free one).")
    var port: Int = 0

    @Option(
        name: .customLong("studio-page"),
        help: ArgumentHelp("Serve the studio's page from DIR (to edit it live).", valueName: "DIR"))
    var page: String?

    func validate() throws {
        try StudioLauncher.validate(port: port, option: "--studio-port")
    }
}

/// `switchyard studio`: the running app in a browser, with an inspector.
struct StudioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studio",
        abstract: "Serve the Switchyard Studio for a running host: the app in a browser, with an inspector.",
        discussion: """
            Prints a URL on 127.0.0.1 with a random token: open it in a browser on this machine. The studio talks to \
            the host through its control socket and reconnects when the host comes back; with no host listening yet it \
            waits 30 s for one (--wait: as long as it takes), and a --port in use is status 69. Fault buttons (SIGKILL, \
            SIGSTOP/SIGCONT, restart) need --allow-faults here and on the host (switchyard run --allow-faults).
            """)

    @OptionGroup var client: ClientOptions

    @Option(name: .long, help: "The TCP port on 127.0.0.1 (default: a free one).")
    var port: Int = 0

    @Option(name: .long, help: ArgumentHelp("Serve the page from DIR (to edit it live).", valueName: "DIR"))
    var page: String?

    @Flag(name: .long, help: "Show the fault buttons; the host must have been started with --allow-faults too.")
    var allowFaults = false

    func validate() throws {
        try StudioLauncher.validate(port: port, option: "--port")
    }

    func run() throws {
        // Found first: a missing studio is said at once, not after waiting for a host.
        let executable = try StudioLauncher.executable()
        if !ControlClient.isListening(client.path) {
            if client.wait {
                StandardError.write(
                    "switchyard studio: waiting for \(client.hostDescription) to listen (--wait: as long as it takes)\n"
                )
            } else {
                let limit = ClientOptions.describe(milliseconds: client.giveUpMs)
                StandardError.write(
                    "switchyard studio: waiting up to \(limit) for \(client.hostDescription) to listen (--wait: as long as it takes)\n"
                )
                guard ClientOptions.waitUntilListening(client.path, milliseconds: client.giveUpMs) else {
                    throw RunFailure(
                        .unavailable,
                        message: """
                            no host listened within \(limit): \(client.hostDescription) is not running (is `switchyard run` running?)
                              \(ClientOptions.otherApps(than: client.app)); reach one with --app NAME or --socket PATH, or pass --wait to serve until a host starts
                            """)
                }
            }
        }
        let child = try StudioLauncher.start(
            executable, socket: client.path, port: port, portOption: "--port",
            allowFaults: allowFaults, page: page, output: { StandardOutput.write($0) })
        // Ctrl-C reaches the studio too (same process group); it stops, and so does this wait.
        var status: Int32?
        while status == nil { status = child.waitForExit(milliseconds: 60_000) }
        // Its own failure (after serving) keeps its status; its message is on stderr already.
        if let status, status != 0 { throw RunFailure.silent(ExitStatus(rawValue: status) ?? .failure) }
    }
}
