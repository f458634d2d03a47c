import ArgumentParser
import Logging
import SwitchyardChaos
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem

/// `switchyard chaos`: the demo app under a stream of navigation requests while plugins are killed, stopped and
/// flooded at random; a report of what was sent, answered, failed (typed) and lost, and how fast the host recovered.
struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Run the demo app under load while killing, stopping and flooding its plugins; report what was lost.",
        discussion: """
            One plugin of the app (--victim, default profile) is played by the misbehaving plugin, which can also \
            flood. Every --fault-interval-ms one fault hits a random ready plugin: SIGKILL (a crash), SIGSTOP (a hang, \
            found by the heartbeat) or, for the victim, a flood of messages (rate limit, quarantine). Requests are \
            deep links and chains across all plugins at --rate per second. A request is lost if it gets neither an \
            answer nor a typed error within --request-deadline-ms. The run is reproducible in its choices (--seed); \
            timings are the machine's.
            """)

    /// The app: its root must be the demo's shape for the request mix.
    @OptionGroup var manifest: ManifestOptions

    @Option(name: .long, help: "How many seconds the load lasts.")
    var duration: Double = 60

    @Option(name: .long, help: "The seed every choice is drawn from: the requests, the faults and their targets.")
    var seed: UInt64 = 1

    @Option(name: .long, help: "How many requests are sent per second.")
    var rate: Int = 200

    @Option(name: .long, help: "How many milliseconds pass between two faults.")
    var faultIntervalMs: Int = 2_000

    @Option(name: .long, help: "The kinds of fault to inject, comma-separated: kill, stop, flood.")
    var faults: String = "kill,stop,flood"

    @Option(name: .long, help: "The demo plugin whose place the misbehaving plugin takes.")
    var victim: String = "profile"

    @Option(name: .long, help: "A request without an answer after this long is lost.")
    var requestDeadlineMs: Int = 30_000

    @Option(name: .long, help: ArgumentHelp("Also write the report as JSON to FILE.", valueName: "FILE"))
    var reportJSON: String?

    @Option(
        name: .long, help: "The host logs at this level (default: error, so that the report stands out).",
        transform: { text in
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw ValidationError("unknown log level '\(text)'")
            }
            return level
        })
    var logLevel: Logger.Level = .error

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in SwitchyardLogHandler(label: label, level: level) }
        let logger = Logger(label: "switchyard")
        let loaded = try manifest.load()
        guard let app = ChaosExperiment.app(loaded, victim: victim) else {
            throw ValidationError("the manifest has no plugin '\(victim)' to replace")
        }

        let host: HostHandle
        do {
            host = try await HostHandle.start(manifest: app, options: HostOptions(), logger: logger)
        } catch let error as ResponseError {
            throw RunFailure(.unavailable, message: RunFailure.describe(error))
        }
        let kinds = Set(faults.split(separator: ",").map { String($0).trimmingWhitespace })
        guard !kinds.isEmpty, kinds.isSubset(of: ["kill", "stop", "flood"]) else {
            throw ValidationError("--faults takes kill, stop and flood")
        }
        let experiment = ChaosExperiment(
            host: host, seed: seed, duration: duration, rate: rate, faultIntervalMs: faultIntervalMs, victim: victim,
            requestDeadlineMs: requestDeadlineMs, kinds: kinds)
        let report = await experiment.run()
        await host.shutdown()
        StandardOutput.write(report.text(command: CommandLine.arguments.joined(separator: " ")))
        if let reportJSON {
            do { try FileSystem.writeFileAtomically(reportJSON, Array(report.json.utf8), mode: 0o644) } catch {
                throw RunFailure(message: "cannot write \(reportJSON): \(error)")
            }
        }
        if report.lost > 0 { throw RunFailure(message: "\(report.lost) requests were lost") }
    }
}
