import ArgumentParser
import SwitchyardHost
import SwitchyardSystem

/// `--manifest` and `--allow-unknown-keys`, for the commands that start an app (`run`, `chaos`).
struct ManifestOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The app manifest (JSON). Default: the demo app of the Switchyard checkout this folder is in.",
            valueName: "FILE"),
        completion: .file(extensions: ["json"]))
    var manifest: String?

    @Flag(
        name: .long,
        help:
            "Warn about keys the manifest format does not have instead of refusing them (a manifest for a newer version)."
    )
    var allowUnknownKeys = false

    /// The manifest's path: `--manifest`, else the demo of the checkout this folder is in.
    func path() throws -> String {
        try manifest ?? Self.findDemo(from: FileSystem.currentDirectory)
    }

    /// Where the bundled demo's manifest sits in a checkout.
    static let demoManifest = "Plugins/demo/switchyard.json"

    /// The manifest, read and checked; a missing or invalid one ends the CLI with its diagnostics and status.
    func load() throws -> Manifest {
        let path = try self.path()
        do {
            return try Manifest.load(path: path, allowUnknownKeys: allowUnknownKeys)
        } catch {
            throw RunFailure(error)
        }
    }

    /// The demo app of the package this folder is in: from `directory` upwards, the first folder holding a
    /// `Package.swift` next to `Plugins/demo/switchyard.json` (as `swift` finds its package from a subfolder, and
    /// past a nested package such as `Plugins/external/ProfilePlugin`). Not found: says where it looked.
    static func findDemo(from directory: String) throws -> String {
        var looked: [String] = []
        var current = directory
        while true {
            let candidate = current == "/" ? "/\(demoManifest)" : "\(current)/\(demoManifest)"
            if FileSystem.exists(candidate),
                FileSystem.exists(FileSystem.parentDirectory(of: candidate) + "/../../Package.swift")
            {
                return candidate
            }
            looked.append(current)
            let parent = FileSystem.parentDirectory(of: current)
            if parent == current || current.isEmpty { break }
            current = parent
        }
        throw RunFailure(
            .noInput,
            message: """
                no --manifest given, and no Switchyard checkout here to run the demo app from: looked for \
                \(demoManifest) in \(looked.joined(separator: ", ")). Pass --manifest FILE (your app's switchyard.json), \
                or run from inside the Switchyard checkout.
                """)
    }
}
