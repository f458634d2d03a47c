public import Logging
public import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem

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
        if spec.hasHostFaults {
            return try await runChild(spec, loaded: loaded, app: app, plugins: plugins, progress: progress)
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

    /// An experiment with the host's own faults: the host runs as a child process (``ChildHost``) on a state file in
    /// a folder of its own, removed afterwards.
    private static func runChild(
        _ spec: ExperimentSpec, loaded: Manifest, app: Manifest, plugins: [String],
        progress: (@Sendable (ChaosProgress) -> Void)?
    ) async throws(ChaosExperimentError) -> Outcome {
        let directory: String
        do { directory = try FileSystem.makeTemporaryDirectory(prefix: "switchyard-chaos") } catch {
            throw .hostDidNotStart("cannot make a folder for the host's state: \(error)")
        }
        defer { FileSystem.removeTree(directory) }
        // The app as loaded, with the victim replaced: a manifest that extends the app's own file, so every path in
        // it stays relative to where it was written.
        var extending = Manifest(plugins: app.plugins.filter { $0.product == "misbehave" })
        extending.extends = loaded.path ?? spec.app
        let child = try ChildHost(manifest: extending, directory: directory, executable: ChildHost.defaultExecutable)
        do { _ = try await child.start() } catch {
            await child.stop()
            throw error
        }
        let outcome = await ChaosExperiment(
            host: child, child: child, spec: spec, plugins: plugins, progress: progress
        ).run()
        await child.stop()
        return outcome
    }

    /// Every checker's violations, one per line with the checker's name (empty when all passed): for a test's
    /// failure message.
    public static func violations(_ outcome: Outcome) -> String {
        outcome.results.flatMap { result in result.violations.map { "\(result.checker.rawValue): \($0)" } }
            .joined(separator: "\n")
    }
}
