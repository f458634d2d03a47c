import SwitchyardSystem
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardTestSupport
import SwitchyardUV
import Testing

/// The SDKs' types hold: `tsc --noEmit` (strict) over the Node SDK's declarations and typed examples, `mypy --strict`
/// over the Python SDK, its client and its typed example, and each typed example runs through the host as a plugin.
/// CI installs both checkers (`.ci/run`: node-typescript, mypy) and runs them before `swift test`; here they catch
/// a developer's change too, and are skipped with the install command when the machine lacks them.
@Suite("the SDKs' types: tsc and mypy --strict pass, and the typed examples run", .heavy, .timeLimit(.minutes(3)))
struct SDKTypeCheckTests {
    static let path = SystemProcess.environmentValue("PATH")
    static let tsc = FileSystem.findExecutable("tsc", path: path)
    static let mypy = FileSystem.findExecutable("mypy", path: path)
    static let node = packageRoot + "/Protocol/sdk/node"
    static let python = packageRoot + "/Protocol/sdk/python"

    /// Runs a command to its end (bounded); returns its status and everything it printed.
    static func run(_ command: [String], in directory: String) async throws -> (status: Int32, output: String) {
        let process = try CLIProcess(Array(command.dropFirst()), executable: command[0], currentDirectory: directory)
        process.closeStdin()
        let status = try await process.waitForExit(seconds: max(defaultTimeout, 120))
        return (status, (process.stdout + process.stderr).joined(separator: "\n"))
    }

    @Test(
        "tsc --noEmit -p Protocol/sdk/node: the declarations and the typed examples (CommonJS and ES module), strict",
        .enabled(if: tsc != nil, "tsc is not installed (Debian: apt-get install node-typescript); CI installs it"))
    func typescript() async throws {
        let result = try await Self.run([try #require(Self.tsc), "--noEmit", "-p", Self.node], in: Self.node)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(
        "mypy --strict over the Python SDK, its control client and the typed example (pyproject.toml's [tool.mypy])",
        .enabled(
            if: mypy != nil, "mypy is not installed (Debian: apt-get install mypy, or pip install mypy); CI installs it"
        ))
    func mypyStrict() async throws {
        // No cache: nothing is written into the checkout.
        let result = try await Self.run(
            [try #require(Self.mypy), "--strict", "--cache-dir=/dev/null"], in: Self.python)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("Success: no issues found"), "\(result.output)")
    }

    /// The typed examples' app: the `orders` type at the root, a link through its async resolver and route, a guard
    /// refusing, a link the resolver refuses.
    static func runOrders(command: [String]) async throws -> TreeSnapshot {
        let directory = try TestSweep.temporaryDirectory()
        let manifest: JSONValue = [
            "app": "orders", "root": ["plugin": "orders", "type": "orders"],
            "plugins": [["name": "orders", "command": .array(command.map { .string($0) })]],
        ]
        try FileSystem.writeFileAtomically(directory + "/switchyard.json", JSONWriter.encode(manifest), mode: 0o600)
        let script = """
            switchyard://order/2
            expect stack @root order
            expect error rejectedByGuard switchyard://order/9
            expect error deepLinkInvalid switchyard://nothing/here

            """
        try FileSystem.writeFileAtomically(directory + "/try.txt", Array(script.utf8), mode: 0o600)
        let run = try CLIProcess([
            "run", "--manifest", directory + "/switchyard.json", "--script", directory + "/try.txt", "--json",
            "--no-socket",
        ])
        run.closeStdin()
        let status = try await run.waitForExit()
        #expect(status == 0, "\((run.stdout + run.stderr).joined(separator: "\n"))")
        return try lastTreeJSONLine(run.stdout)
    }

    static func expectOrder(_ tree: TreeSnapshot) {
        #expect(
            tree.instances.first?.entries?.last?.content
                == .screen(
                    ScreenDescriptor(name: "Order", props: ["id": 2, "title": "Cake", "via": "switchyard://order/2"])))
    }

    @Test(
        "the typed Node example, compiled by tsc against the npm-installed package, runs through the host",
        .enabled(if: tsc != nil, "tsc is not installed (Debian: apt-get install node-typescript); CI installs it"))
    func typedNodeExample() async throws {
        let prefix = try await SDKInstall.nodePrefix()
        let directory = prefix + "/typed"
        try FileSystem.makeDirectory(directory, mode: 0o700)
        try FileSystem.writeFileAtomically(
            directory + "/typed-plugin.ts", FileSystem.readFile(Self.node + "/examples/typed-plugin.ts"), mode: 0o600)
        // What a TypeScript user of the installed package writes: strict, Node's module resolution, no @types/node.
        let options: JSONValue = [
            "compilerOptions": [
                "strict": true, "module": "node16", "moduleResolution": "node16", "target": "es2022", "lib": ["es2022"],
                "types": [], "outDir": "out", "rootDir": ".",
            ], "files": ["typed-plugin.ts"],
        ]
        try FileSystem.writeFileAtomically(directory + "/tsconfig.json", JSONWriter.encode(options), mode: 0o600)
        let compiled = try await Self.run([try #require(Self.tsc), "-p", directory], in: directory)
        #expect(compiled.status == 0, "\(compiled.output)")
        Self.expectOrder(try await Self.runOrders(command: [TestPlugins.node, directory + "/out/typed-plugin.js"]))
    }

    @Test("the typed Python example runs through the host on the pip-installed package")
    func typedPythonExample() async throws {
        let environment = try await SDKInstall.pythonEnvironment()
        Self.expectOrder(
            try await Self.runOrders(command: [environment + "/python3", Self.python + "/examples/typed_plugin.py"]))
    }
}
