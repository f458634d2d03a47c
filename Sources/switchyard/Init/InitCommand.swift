import ArgumentParser
import SwitchyardSystem

/// `switchyard init`: starting points for plugin authors.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a new plugin from a template.",
        subcommands: [InitPluginCommand.self]
    )
}

/// `switchyard init plugin NAME --language swift|python|node`: a plugin that builds, runs in an app, passes its own
/// test and a scenario script as generated, so an author starts from working code instead of from the spec.
struct InitPluginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin",
        abstract: "Write a ready plugin: its code, a manifest, a scenario script with expectations and a test.",
        discussion: """
            The plugin declares a stack coordinator (a root screen, an item pushed with an integer id and a deep \
            link, a settings modal); --type tabs puts it in the first of two tabs, --type wrapper inside a wrapper, \
            and the app starts from that type. Written into DIR (default ./NAME): for Swift, a package depending on \
            the SwitchyardPlugin product with a Swift Testing test; for Python and Node, a script using the \
            installed SDK with a unittest or node:test test. In every language: switchyard.json (an app whose root \
            is the plugin) and scenario.txt (switchyard run --manifest switchyard.json --script scenario.txt). \
            Existing files are never overwritten.
            """
    )

    @Argument(
        help:
            "The plugin's name, which manifests and other plugins' routes use: lowercase letters and digits, words joined by '-' or '_'."
    )
    var name: String

    @Option(help: "Write the plugin in swift, python or node.")
    var language: PluginLanguage

    @Option(name: .customLong("type"), help: "The coordinator type the app starts from: stack, tabs or wrapper.")
    var kind: PluginKind = .stack

    @Option(help: ArgumentHelp("Where to write the plugin (default: ./NAME).", valueName: "DIR"))
    var directory: String?

    @Option(
        help: ArgumentHelp(
            "The Switchyard checkout whose SDK the plugin uses (default: the one this switchyard was built from).",
            valueName: "DIR"))
    var switchyardPath: String?

    @Option(
        name: .customLong("switchyard-url"),
        help: ArgumentHelp(
            "Swift only: depend on Switchyard by repository URL and this CLI's version instead of by path.",
            valueName: "URL"))
    var switchyardURL: String?

    func validate() throws {
        if switchyardURL != nil && switchyardPath != nil {
            throw ValidationError("--switchyard-url and --switchyard-path are alternatives; give one")
        }
        if switchyardURL != nil && language != .swift {
            throw ValidationError(
                "--switchyard-url is for --language swift; the \(language) SDK installs from a checkout (--switchyard-path)"
            )
        }
    }

    /// Modules the Python plugin or its test imports: a plugin file of the same name, first on `sys.path`, would
    /// be imported instead of them.
    private static let pythonImports: Set = [
        "switchyard", "json", "os", "queue", "subprocess", "sys", "threading", "unittest",
    ]

    func run() throws {
        let names = try PluginNames(name)
        if language == .python && Self.pythonImports.contains(names.snake) {
            throw ValidationError(
                "a Python plugin named '\(name)' would be \(names.snake).py, which hides the module '\(names.snake)' its code or test imports; choose another name"
            )
        }
        let template = PluginTemplate(names: names, kind: kind, sdk: try sdkSource())
        let directory = self.directory ?? name
        let files = template.files(for: language)
        try Self.write(files, into: directory)

        var summary = "Created the \(language) plugin '\(name)' (\(kind) root) in \(directory)/:\n"
        for file in files { summary += "  \(file.path)\n" }
        summary += "Next:\n" + template.nextSteps(for: language, directory: directory).map { "  \($0)\n" }.joined()
        StandardOutput.write(summary)
    }

    /// Where the generated plugin gets the SDK from: the option given, else the checkout this binary was built from
    /// (a user who ran `swift run switchyard` from a clone gets a plugin that builds at once, offline).
    private func sdkSource() throws -> SDKSource {
        if let switchyardURL { return .released(url: switchyardURL, version: Switchyard.configuration.version) }
        if let switchyardPath {
            let absolute =
                switchyardPath.hasPrefix("/") ? switchyardPath : FileSystem.currentDirectory + "/" + switchyardPath
            guard let checkout = FileSystem.realPath(absolute), Self.isCheckout(checkout) else {
                throw ValidationError(
                    "--switchyard-path \(switchyardPath) is not a Switchyard checkout (no Package.swift and Protocol/sdk there)"
                )
            }
            return .checkout(checkout)
        }
        if let checkout = Self.buildCheckout, Self.isCheckout(checkout) { return .checkout(checkout) }
        throw ValidationError(
            "this switchyard was not run from the checkout it was built from, so the plugin's SDK cannot be found; "
                + "pass --switchyard-path DIR (a Switchyard checkout)"
                + (language == .swift ? " or --switchyard-url URL (a released Switchyard)" : ""))
    }

    /// The checkout this file was compiled in: Sources/switchyard/Init/InitCommand.swift, three folders down.
    private static var buildCheckout: String? {
        var path = #filePath
        for _ in 0..<4 { path = FileSystem.parentDirectory(of: path) }
        return FileSystem.realPath(path)
    }

    private static func isCheckout(_ path: String) -> Bool {
        FileSystem.exists(path + "/Package.swift") && FileSystem.isDirectory(path + "/Protocol/sdk/python")
            && FileSystem.isDirectory(path + "/Protocol/sdk/node")
    }

    /// Writes every file, or none if any is already there. Each is created exclusively (`O_EXCL`), so even a file
    /// that appears between the check and the write is not overwritten.
    static func write(_ files: [GeneratedFile], into directory: String) throws {
        let existing = files.map { directory + "/" + $0.path }.filter(FileSystem.exists)
        guard existing.isEmpty else {
            throw RunFailure(
                .cannotCreate,
                message:
                    "refusing to overwrite \(existing.joined(separator: ", ")): choose another --directory or move "
                    + (existing.count == 1 ? "it" : "them") + " away")
        }
        for file in files {
            let path = directory + "/" + file.path
            do {
                try FileSystem.makeDirectory(FileSystem.parentDirectory(of: path), mode: 0o755)
                try FileSystem.createFile(path, Array(file.text.utf8), mode: file.isExecutable ? 0o755 : 0o644)
            } catch  where error.alreadyExists {
                throw RunFailure(
                    .cannotCreate,
                    message: "refusing to overwrite \(path): it appeared while the plugin was being written")
            } catch {
                throw RunFailure(.cannotCreate, message: "cannot write \(path): \(error)")
            }
        }
    }
}

/// The plugin's language, and so its SDK.
enum PluginLanguage: String, ExpressibleByArgument, CaseIterable, CustomStringConvertible {
    case swift, python, node
    var description: String { rawValue }
}

/// The kind of the coordinator type the generated app starts from.
enum PluginKind: String, ExpressibleByArgument, CaseIterable, CustomStringConvertible {
    case stack, tabs, wrapper
    var description: String { rawValue }
}

/// Where a generated plugin gets the SDK.
enum SDKSource {
    /// A Switchyard checkout on this machine, by path: builds and installs offline, for local development.
    case checkout(String)
    /// A released Switchyard, by repository URL and version (Swift only).
    case released(url: String, version: String)
}

/// One file of a generated plugin, relative to its folder.
struct GeneratedFile {
    let path: String
    let text: String
    var isExecutable = false
}
