import Glibc
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// `switchyard init plugin` as an author uses it: the plugin it writes, in each language and with each kind of root,
/// built or installed as its own files say, runs its scenario through the real CLI and real plugin processes, passes
/// `switchyard check-plugin` and its own test.
// Alone and one variant at a time: each builds a package (the compiler takes both cores), and the suites that
// judge timing must never run beside a compiler.
@Suite("switchyard init plugin: the generated plugins", .serialized, .heavyAlone, .timeLimit(.minutes(15)))
struct InitPluginTests {
    static let name = "orders"

    /// Writes a plugin with `switchyard init plugin` into a fresh temporary folder (the SDK from this checkout, by
    /// path) and returns the folder.
    static func generate(_ language: String, _ kind: String) async throws -> String {
        let directory = try TestSweep.temporaryDirectory() + "/" + name
        let result = try await CLITests.run([
            "init", "plugin", name, "--language", language, "--type", kind, "--directory", directory,
            "--switchyard-path", packageRoot,
        ])
        try #require(
            result.status == 0, "init plugin failed:\n\((result.stdout + result.stderr).joined(separator: "\n"))")
        return directory
    }

    /// The command that starts the generated plugin, as its switchyard.json has it, made absolute: what
    /// `check-plugin` is pointed at.
    static func pluginCommand(_ language: String, in directory: String, python: String = TestPlugins.python) -> [String]
    {
        switch language {
        case "swift": [directory + "/.build/debug/" + name]
        case "python": [python, directory + "/" + name + ".py"]
        default: [TestPlugins.node, directory + "/" + name + ".js"]
        }
    }

    /// Runs a command to its end in `directory` (bounded by `seconds`); throws its output unless it exits 0, since
    /// every later step needs this one.
    @discardableResult
    static func expectSuccess(
        _ command: [String], in directory: String, environment: [String: String] = [:],
        seconds: Double = max(defaultTimeout, 120)
    ) async throws -> CLIProcess {
        let process = try CLIProcess(
            Array(command.dropFirst()), executable: command[0], environment: environment, currentDirectory: directory)
        process.closeStdin()
        let status = try await process.waitForExit(seconds: seconds)
        try #require(
            status == 0,
            "\(command.joined(separator: " ")) exited with \(status):\n\((process.stdout + process.stderr).joined(separator: "\n"))"
        )
        return process
    }

    /// `switchyard check-plugin` on the plugin started by ``pluginCommand(_:in:python:)``, with no app: every
    /// check passes. Only `warns` may warn: the Python and Node SDKs leave declared param types to the host, which
    /// checks them before it asks (§12.1), so a wrong-typed `id` sent to the plugin directly is not refused there.
    static func expectPassesCheckPlugin(_ command: [String], in directory: String, warns: Set<String> = []) async throws
    {
        let check = try await expectSuccess(
            [product("switchyard"), "check-plugin", "--json", "--name", name, "--"] + command, in: directory,
            seconds: max(defaultTimeout, 60))
        let checks = try JSONParser.parse(check.stdout.joined(separator: "\n"))["checks"]?.arrayValue ?? []
        let ids = { (status: String) in
            Set(checks.filter { $0["status"]?.stringValue == status }.compactMap { $0["id"]?.stringValue })
        }
        #expect(ids("FAIL") == [] && ids("WARN").isSubset(of: warns), "\(check.stdout.joined(separator: "\n"))")
        #expect(
            ids("PASS").isSuperset(of: [
                "handshake", "route-table", "create", "route", "deep-link", "restore", "shutdown", "eof",
            ]))
    }

    static func rootType(_ kind: String) -> String {
        ["tabs": name + "Tabs", "wrapper": name + "Navigation"][kind] ?? name
    }

    /// Runs the generated scenario against the generated manifest, in the plugin's folder as its author would, and
    /// checks the app started from the kind of root asked for.
    static func runScenario(in directory: String, kind: String, environment: [String: String] = [:]) async throws {
        let run = try await expectSuccess(
            [
                product("switchyard"), "run", "--manifest", "switchyard.json", "--script", "scenario.txt", "--json",
                "--no-socket",
            ],
            in: directory, environment: environment)
        let tree = try CLITests.lastJSONLine(run.stdout)
        #expect(tree.instances.first?.type == rootType(kind))
        #expect(tree.find(name, name)?.entries == [], "the scenario ends at the stack's root")
        // With --json, stdout holds the snapshot alone and the script's transcript goes to stderr.
        #expect(
            run.stderr.contains(
                "ok: expect error rejectedByGuard switchyard://\(kind == "tabs" ? "browse/" : "")item/0"))
    }

    static var executableSearchPath: String { SystemProcess.environmentValue("PATH") ?? "/usr/bin:/bin" }

    /// The script's environment: the CLI first on the PATH. The switchyard it starts is not the test's child, so it
    /// must not watch the test process as its parent (it would take the script for a dead harness and stop); the
    /// script and what it starts are bounded (export ends its plugin with the ladder) and end with it.
    static func scriptEnvironment(path: String) -> [String: String] {
        ["PATH": productsDirectory + ":" + path, "SWITCHYARD_EXIT_WITH_PARENT": ""]
    }

    /// The generated CI script, run as generated (the switchyard CLI first on the PATH, as the workflow puts it):
    /// the committed contract is what the plugin declares, and nothing broke (no release tag yet, so the committed
    /// contract is the baseline).
    static func runContractCheck(in directory: String, path: String = executableSearchPath) async throws {
        let check = try await expectSuccess(
            [directory + "/ci/contract-check.sh"], in: directory, environment: scriptEnvironment(path: path))
        #expect(
            check.stdout.contains("baseline: contracts/\(name).json as committed (no release tag has it yet)"),
            "\(check.stdout)")
        #expect(check.stdout.last?.hasSuffix("0 breaking changes, 0 compatible") == true, "\(check.stdout)")
    }

    @Test(
        "Python: the script on the pip-installed SDK runs its scenario, passes check-plugin and its unittest",
        arguments: ["stack", "tabs", "wrapper"])
    func python(kind: String) async throws {
        let environment = try await SDKInstall.pythonEnvironment()
        let directory = try await Self.generate("python", kind)
        // The manifest runs `python3` from the PATH: the virtual environment's, as after `. .venv/bin/activate`.
        try await Self.runScenario(
            in: directory, kind: kind, environment: ["PATH": environment + ":" + Self.executableSearchPath])
        try await Self.expectPassesCheckPlugin(
            Self.pluginCommand("python", in: directory, python: environment + "/python3"), in: directory,
            warns: ["param-types"])
        try await Self.runContractCheck(in: directory, path: environment + ":" + Self.executableSearchPath)
        // Its app test starts the app with `switchyard run`: the CLI on the PATH, the environment's python3 before it.
        let test = try await Self.expectSuccess(
            [environment + "/python3", "-m", "unittest", "-v"], in: directory,
            environment: Self.scriptEnvironment(path: environment + ":" + Self.executableSearchPath))
        #expect(test.stderr.contains("OK"), "\(test.stderr)")
        #expect(test.stderr.contains { $0.hasPrefix("test_guard_refuses_item_zero") && $0.hasSuffix("ok") })
        #expect(
            test.stderr.contains { $0.hasPrefix("test_an_unasserted_change_fails_the_test") && $0.hasSuffix("ok") },
            "the app test over a real host ran: \(test.stderr)")
    }

    @Test(
        "Node: the script on the npm-installed SDK runs its scenario, passes check-plugin and its node:test test",
        arguments: ["stack", "tabs", "wrapper"])
    func node(kind: String) async throws {
        let directory = try await Self.generate("node", kind)
        guard let npm = FileSystem.findExecutable("npm", path: Self.executableSearchPath) else {
            throw TestFailure("npm is not on the PATH (Debian: apt-get install npm)")
        }
        // package.json names the SDK by a file: path; --install-links copies it as a registry install would.
        try await Self.expectSuccess(
            [npm, "install", "--offline", "--install-links", "--no-audit", "--no-fund"], in: directory)
        try await Self.runScenario(in: directory, kind: kind)
        try await Self.expectPassesCheckPlugin(
            Self.pluginCommand("node", in: directory), in: directory, warns: ["param-types"])
        try await Self.runContractCheck(in: directory)
        let test = try await Self.expectSuccess(
            [npm, "test"], in: directory, environment: Self.scriptEnvironment(path: Self.executableSearchPath))
        #expect(test.stdout.contains("# fail 0"), "\(test.stdout)")
    }

    @Test(
        "the generated contract CI fails on a stale contract and on a breaking change since the last release tag; --allow by CONTRACT_ALLOW"
    )
    func contractCIFailsOnABreakingChange() async throws {
        let environment = try await SDKInstall.pythonEnvironment()
        let directory = try await Self.generate("python", "stack")
        let path = environment + ":" + Self.executableSearchPath
        let git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
        try await Self.expectSuccess(git + ["init", "-q"], in: directory)
        try await Self.expectSuccess(git + ["add", "-A"], in: directory)
        try await Self.expectSuccess(git + ["commit", "-qm", "0.1.0"], in: directory)
        try await Self.expectSuccess(git + ["tag", "0.1.0"], in: directory)
        func script(_ extra: [String: String] = [:]) async throws -> (status: Int32, stdout: [String], stderr: [String])
        {
            let process = try CLIProcess(
                [], executable: directory + "/ci/contract-check.sh",
                environment: Self.scriptEnvironment(path: path).merging(extra) { $1 },
                currentDirectory: directory)
            process.closeStdin()
            let status = try await process.waitForExit(seconds: max(defaultTimeout, 60))
            return (status, process.stdout, process.stderr)
        }
        let released = try await script()
        #expect(released.status == 0, "\(released.stdout + released.stderr)")
        #expect(
            released.stdout.contains("baseline: contracts/\(Self.name).json at 0.1.0"),
            "\(released.stdout + released.stderr)")

        // The settings route is removed from the code: first the committed contract is stale...
        var code = String(decoding: try FileSystem.readFile(directory + "/\(Self.name).py"), as: UTF8.self)
        code = code.replacing(#"        switchyard.modal("settings", deep_link="settings"),"# + "\n", with: "")
        try FileSystem.writeFileAtomically(directory + "/\(Self.name).py", Array(code.utf8), mode: 0o755)
        let stale = try await script()
        #expect(stale.status == 1)
        #expect(
            stale.stderr.contains(
                "error: contracts/\(Self.name).json is not the contract the plugin declares now; export it and commit it:"
            ), "\(stale.stderr)")
        #expect(stale.stderr.contains { $0.hasPrefix("-        \"settings\": {") })

        // ...then, exported again as the script says, the diff against the release fails on the removed route.
        try await Self.expectSuccess(
            [
                product("switchyard"), "contract", "export", "--manifest", "switchyard.json", "--manifest-entry",
                Self.name, "--output", "contracts/\(Self.name).json",
            ],
            in: directory, environment: ["PATH": productsDirectory + ":" + path])
        let breaking = try await script()
        #expect(breaking.status == 1)
        #expect(
            breaking.stdout.contains {
                $0.contains(
                    "error: [ROUTE_REMOVED] /types/\(Self.name)/routes/settings: route 'settings' of type '\(Self.name)' was removed"
                )
            },
            "\(breaking.stdout + breaking.stderr)")
        let allowed = try await script(["CONTRACT_ALLOW": "ROUTE_REMOVED"])
        #expect(allowed.status == 0, "\(allowed.stdout + allowed.stderr)")
        #expect(allowed.stdout.last?.hasSuffix("1 breaking change (1 allowed), 0 compatible") == true)
    }

    /// Where every generated Swift package builds: shared, and kept between test runs (it is in the checkout's
    /// ignored `.build-*` folders), so only the first build compiles the SDK.
    static let swiftScratch = packageRoot + "/.build-init-plugin"

    @Test(
        "Swift: the package builds against this checkout, runs its scenario, passes check-plugin and its Swift Testing test",
        .serialized, arguments: ["stack", "tabs", "wrapper"])
    func swift(kind: String) async throws {
        let directory = try await Self.generate("swift", kind)
        let manifest = String(decoding: try FileSystem.readFile(directory + "/Package.swift"), as: UTF8.self)
        #expect(
            manifest.contains(
                #".package(name: "Switchyard", path: "\#(FileSystem.realPath(packageRoot) ?? packageRoot)")"#))
        #expect(!manifest.contains("SwitchyardHost") && !manifest.contains("SwitchyardUV"))
        // Built in the shared scratch folder, named by its real path: the compiler's module cache records paths, so
        // reaching it through each package's own .build would make every build a different one. The symlink is for
        // switchyard.json, whose command is .build/debug/orders.
        try FileSystem.makeDirectory(Self.swiftScratch, mode: 0o755)
        try #require(unsafe symlink(Self.swiftScratch, directory + "/.build") == 0, "symlink: errno \(errno)")
        let scratch = ["--scratch-path", Self.swiftScratch]
        try await Self.expectSuccess(["swift", "build", "--build-tests"] + scratch, in: directory, seconds: 540)
        try await Self.runScenario(in: directory, kind: kind)
        try await Self.expectPassesCheckPlugin(Self.pluginCommand("swift", in: directory), in: directory)
        try await Self.runContractCheck(in: directory)
        let test = try await Self.expectSuccess(
            ["swift", "test", "--skip-build"] + scratch, in: directory, seconds: 120)
        #expect(
            (test.stdout + test.stderr).contains { $0.contains("Test run with") && $0.contains("passed") },
            "\(test.stdout)")
    }
}

/// The arguments and the one rule that protects an author's work: nothing is ever overwritten.
@Suite("switchyard init plugin: arguments and existing files", .timeLimit(.minutes(2)))
struct InitPluginArgumentTests {
    @Test("an existing file is never overwritten: the error names it, and nothing is written")
    func refusesToOverwrite() async throws {
        let directory = try TestSweep.temporaryDirectory()
        try FileSystem.writeFileAtomically(directory + "/scenario.txt", Array("mine\n".utf8), mode: 0o644)
        let result = try await CLITests.run([
            "init", "plugin", "orders", "--language", "python", "--directory", directory, "--switchyard-path",
            packageRoot,
        ])
        #expect(result.status == 73, "EX_CANTCREAT")
        #expect(
            result.stderr.contains { $0.contains("refusing to overwrite \(directory)/scenario.txt") },
            "\(result.stderr)")
        #expect(try FileSystem.readFile(directory + "/scenario.txt") == Array("mine\n".utf8))
        #expect(FileSystem.listDirectory(directory) == ["scenario.txt"], "all or nothing: no other file was written")
    }

    @Test("a second init into the same folder names every file it would overwrite")
    func secondInit() async throws {
        let directory = try TestSweep.temporaryDirectory() + "/orders"
        let arguments = [
            "init", "plugin", "orders", "--language", "node", "--directory", directory, "--switchyard-path",
            packageRoot,
        ]
        let first = try await CLITests.run(arguments)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("  test/orders.test.js"))
        let second = try await CLITests.run(arguments)
        #expect(second.status != 0)
        #expect(
            second.stderr.contains { $0.contains("\(directory)/package.json, \(directory)/orders.js") },
            "\(second.stderr)")
    }

    @Test(
        "bad arguments are refused with what to do",
        arguments: [
            (["Orders", "--language", "swift"], "must be lowercase letters and digits"),
            (["orders--x", "--language", "swift"], "words joined by one '-' or '_'"),
            (["orders", "--language", "ruby"], "Please provide one of 'swift', 'python' or 'node'"),
            (
                ["orders", "--language", "python", "--switchyard-url", "https://example.invalid/switchyard.git"],
                "--switchyard-url is for --language swift"
            ),
            (["orders", "--language", "node", "--switchyard-path", "/tmp"], "is not a Switchyard checkout"),
            (["switchyard", "--language", "python"], "would be switchyard.py, which hides the module 'switchyard'"),
        ])
    func badArguments(arguments: [String], message: String) async throws {
        let directory = try TestSweep.temporaryDirectory()
        let result = try await CLITests.run(["init", "plugin"] + arguments + ["--directory", directory + "/plugin"])
        #expect(result.status != 0)
        #expect(result.stderr.contains { $0.contains(message) }, "\(result.stderr)")
        #expect(!FileSystem.exists(directory + "/plugin"))
    }

    @Test("--switchyard-url makes a Swift package that depends on a release by URL and version")
    func releasedDependency() async throws {
        let directory = try TestSweep.temporaryDirectory() + "/orders"
        let result = try await CLITests.run([
            "init", "plugin", "orders", "--language", "swift", "--directory", directory, "--switchyard-url",
            "https://example.invalid/team/switchyard.git",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let manifest = String(decoding: try FileSystem.readFile(directory + "/Package.swift"), as: UTF8.self)
        #expect(manifest.contains(#".package(url: "https://example.invalid/team/switchyard.git", from: "0.1.0")"#))
        #expect(manifest.contains(#".product(name: "SwitchyardPlugin", package: "switchyard")"#))
        // The contract's CI builds the CLI from the same release and runs the script the plugin carries.
        let workflow = String(
            decoding: try FileSystem.readFile(directory + "/.github/workflows/contract.yml"), as: UTF8.self)
        #expect(workflow.contains("SWITCHYARD_REPOSITORY: https://example.invalid/team/switchyard.git"))
        #expect(
            workflow.contains("fetch-depth: 0") && workflow.contains("run: ci/contract-check.sh")
                && workflow.contains("swift build\n"))
        #expect(FileSystem.isExecutable(directory + "/ci/contract-check.sh"))
        let contract = try RouteContract(parsing: try FileSystem.readFile(directory + "/contracts/orders.json"))
        #expect(
            contract.plugin == PluginInfo(name: "orders", version: "0.1.0")
                && contract.types.keys.sorted() == ["orders"])
    }
}
