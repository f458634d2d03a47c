public import Logging
public import SwitchyardHost
import SwitchyardProtocol

/// Why an experiment could not run: its file or its app is wrong (with every finding, at its line and field), or
/// the host did not start.
public enum ChaosExperimentError: Error, CustomStringConvertible, Sendable {
    case invalid(ManifestError)
    case hostDidNotStart(String)

    public var description: String {
        switch self {
        case .invalid(let error): error.description
        case .hostDidNotStart(let reason): "the host did not start: \(reason)"
        }
    }
}

extension ChaosExperiment {
    /// Runs `spec` from start to end: reads its app, checks the experiment against it, starts a host that takes
    /// faults with the victim played by the misbehaving plugin, runs the load and the schedule, stops the host and
    /// returns the history with each checker's result. The entry point for a Swift test (`import SwitchyardChaos`)
    /// and the one `switchyard chaos` uses.
    ///
    /// - Parameters:
    ///   - file: the experiment file `spec` was read from, so a problem is reported at its line.
    ///   - allowUnknownKeys: read the app's manifest as `--allow-unknown-keys` does.
    ///   - progress: called every 2 s while the load runs (the terminal's progress line).
    @concurrent public static func run(
        _ spec: ExperimentSpec, file: String? = nil, allowUnknownKeys: Bool = false,
        logger: Logger = Logger(label: "switchyard-chaos"), progress: (@Sendable (ChaosProgress) -> Void)? = nil
    ) async throws(ChaosExperimentError) -> Outcome {
        let loaded: Manifest
        do { loaded = try Manifest.load(path: spec.app, allowUnknownKeys: allowUnknownKeys) } catch {
            throw .invalid(error)
        }
        let plugins = loaded.plugins.map(\.name)
        if let error = ExperimentSpec.diagnose(spec.problems(plugins: plugins), path: file) { throw .invalid(error) }
        guard let app = app(loaded, victim: spec.victimName, defect: spec.defect) else {
            throw .invalid(ManifestError(path: file ?? spec.app, message: "no plugin '\(spec.victimName)' to replace"))
        }
        var options = HostOptions()
        options.allowFaults = true
        let host: HostHandle
        do { host = try await HostHandle.start(manifest: app, options: options, logger: logger) } catch {
            throw .hostDidNotStart("\(error)")
        }
        let outcome = await ChaosExperiment(host: host, spec: spec, plugins: plugins, progress: progress).run()
        await host.shutdown()
        return outcome
    }

    /// Every checker's violations, one per line with the checker's name (empty when all passed): for a test's
    /// failure message.
    public static func violations(_ outcome: Outcome) -> String {
        outcome.results.flatMap { result in result.violations.map { "\(result.checker.rawValue): \($0)" } }
            .joined(separator: "\n")
    }
}
