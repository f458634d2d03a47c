import ArgumentParser
import Logging
import SwitchyardHost
import SwitchyardUV

/// `switchyard run`: starts the app described by a manifest and serves it until interrupted.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Start an app from its manifest (the bundled demo app by default)."
    )

    @Option(name: .long, help: "The app manifest (JSON).")
    var manifest: String = "Plugins/demo/switchyard.json"

    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = log.makeLogger()
        let manifest: Manifest
        do { manifest = try Manifest.load(path: self.manifest) } catch {
            throw ValidationError("\(error)")
        }
        let host = try await HostHandle.start(
            manifest: manifest, options: HostOptions(handleSignals: true), logger: logger)
        let statuses = await host.status()
        let ready = statuses.filter { $0.state == .ready }.map(\.name)
        StandardError.write("switchyard: ready (\(ready.count)/\(statuses.count) plugins: \(ready.joined(separator: ", "))) pid \(SystemProcess.currentPID)\n")
        await host.waitUntilStopped()
    }
}
