import ArgumentParser
import Foundation
import Logging
import SwitchyardStudio

/// `switchyard-studio`: the composed app live in a browser, with an inspector, for a host that is already running.
/// Started by `switchyard studio` and `switchyard run --studio` (the host process itself never links SwiftNIO).
@main
struct StudioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switchyard-studio",
        abstract: "Serve the Switchyard Studio for a running host, on 127.0.0.1 only.",
        discussion: "Usually started as `switchyard studio` or `switchyard run --studio`, which find the host's socket."
    )

    @Option(name: .long, help: "The host's control socket.")
    var socket: String

    @Option(name: .long, help: "The TCP port on 127.0.0.1 (default: a free one).")
    var port: Int = 0

    @Flag(
        name: .long, help: "Show the fault buttons (SIGKILL, SIGSTOP/SIGCONT, restart); the host must allow them too.")
    var allowFaults = false

    @Option(
        name: .long,
        help: ArgumentHelp("Serve the page from DIR instead of the built-in copy (to edit it live).", valueName: "DIR"))
    var page: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Bytes of the host's lines that may wait for one browser (tests).", visibility: .hidden))
    var maxPendingBytes = 1 << 20

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The option a user sets this port with, for the hint when it is in use (`switchyard run` passes --studio-port).",
            visibility: .hidden))
    var portOption = "--port"

    @Flag(name: .long, help: "Exit when standard input closes (how a parent process that starts the studio ends it).")
    var exitWithStdin = false

    @Option(
        name: .long, help: "trace, debug, info, notice, warning, error or critical.",
        transform: { text in
            guard let level = Logger.Level(rawValue: text) else { throw ValidationError("unknown log level '\(text)'") }
            return level
        })
    var logLevel: Logger.Level = .warning

    func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port \(port) is not a TCP port (0 picks a free one)")
        }
        guard maxPendingBytes > 0 else { throw ValidationError("--max-pending-bytes must be positive") }
    }

    func run() async throws {
        var logger = Logger(label: "switchyard-studio")
        logger.logLevel = logLevel
        let configuration = StudioConfiguration(
            socketPath: socket, port: port, allowFaults: allowFaults, pageDirectory: page,
            maxPendingBytes: maxPendingBytes)
        let server: StudioServer
        do { server = try StudioServer(configuration: configuration, logger: logger) } catch {
            FileHandle.standardError.write(Data("switchyard-studio: \(error)\n".utf8))
            throw ExitCode(66)
        }
        if exitWithStdin {
            // The parent holds the other end of our stdin: when it goes, however it goes, so does the studio.
            Thread.detachNewThread {
                while let chunk = try? FileHandle.standardInput.read(upToCount: 4_096), !chunk.isEmpty {}
                Foundation.exit(0)
            }
        }
        do {
            try await server.run { url in
                // One line a person reads and a harness parses.
                FileHandle.standardOutput.write(Data("switchyard studio: \(url)\n".utf8))
            }
        } catch StudioServerError.portInUse(let port) {
            FileHandle.standardError.write(
                Data(
                    """
                    switchyard-studio: error: port \(port) on 127.0.0.1 is already in use by another program
                      choose another \(portOption), or \(portOption) 0 to let the system pick a free one (the URL printed names it)

                    """.utf8))
            // EX_UNAVAILABLE, as the CLI's other "cannot serve here" failures (switchyard --help lists the statuses).
            throw ExitCode(69)
        }
    }
}
