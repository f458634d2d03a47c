import SwitchyardSystem
import SwitchyardTestSupport

/// The Python and Node SDK packages installed the way the README tells a plugin author to, into fresh temporary
/// places, offline (`pip --no-index`, `npm --offline`): the proof that the packages install without network and work
/// without a path hack. Each is made once per test process, on first use, and swept with the test's temporary
/// folders.
package enum SDKInstall {
    /// The `bin` folder of a virtual environment with `pip install Protocol/sdk/python` done: put it first on the
    /// `PATH` and `python3` is that environment's.
    package static func pythonEnvironment() async throws -> String { try await python.value }

    /// An npm prefix with `npm install Protocol/sdk/node` done: scripts in this folder `require('switchyard-sdk')`
    /// and import `switchyard-sdk/client`.
    package static func nodePrefix() async throws -> String { try await node.value }

    private static let python = Task<String, any Error> {
        let directory = try TestSweep.temporaryDirectory()
        try await run(
            [TestPlugins.python, "-m", "venv", directory + "/venv"],
            "python3 -m venv (Debian: apt-get install python3-venv)")
        try await run(
            [
                directory + "/venv/bin/python3", "-m", "pip", "install", "--no-index", "--no-cache-dir",
                "--disable-pip-version-check",
                packageRoot + "/Protocol/sdk/python",
            ],
            "pip install Protocol/sdk/python")
        return directory + "/venv/bin"
    }

    private static let node = Task<String, any Error> {
        let directory = try TestSweep.temporaryDirectory()
        guard let npm = FileSystem.findExecutable("npm", path: SystemProcess.environmentValue("PATH")) else {
            throw TestFailure("npm is not on the PATH (Debian: apt-get install npm)")
        }
        // --install-links copies the package as a registry install would, instead of linking the folder: what is
        // tested is what the package ships (its `files`), not the checkout.
        try await run(
            [
                npm, "install", "--prefix", directory, "--offline", "--install-links", "--no-audit", "--no-fund",
                packageRoot + "/Protocol/sdk/node",
            ],
            "npm install Protocol/sdk/node")
        return directory
    }

    /// Runs a command to completion (bounded) and throws its output if it fails.
    private static func run(_ command: [String], _ what: String) async throws {
        let process = try CLIProcess(Array(command.dropFirst()), executable: command[0], currentDirectory: "/tmp")
        process.closeStdin()
        let status = try await process.waitForExit(seconds: max(defaultTimeout, 120))
        guard status == 0 else {
            throw TestFailure(
                "\(what) failed with status \(status):\n" + (process.stdout + process.stderr).joined(separator: "\n"))
        }
    }
}
