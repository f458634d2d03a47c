import Glibc
import SwitchyardSystem
import Testing

/// What the browser tests need (the studio's, the chaos report's): Debian's `chromium` and `chromium-driver`, and a
/// Python with Selenium to drive them through WebDriver from a script in Tests/Browser.
package enum HeadlessBrowser {
    package static let available =
        FileSystem.exists("/usr/bin/chromium") && FileSystem.exists("/usr/bin/chromedriver")
        && FileSystem.findExecutable("python3", path: SystemProcess.environmentValue("PATH")) != nil

    /// A Python that imports Selenium, found (or made) once for the whole run, on a thread of its own (a pip
    /// install blocks for minutes): tests that run in parallel must not each make the venv.
    private static let selenium = Task { try await onThreadOfItsOwn { try findOrMakePython() } }

    /// A Python that imports Selenium: the system's (`.ci/run` installs it), else a venv kept under `.build`.
    private static func findOrMakePython() throws -> String {
        if (try? SystemProcess.run(["python3", "-c", "import selenium"], timeoutMilliseconds: 30_000))?.status == 0 {
            return "python3"
        }
        let venv = "\(packageRoot)/.build/studio-selenium"
        if (try? SystemProcess.run(["\(venv)/bin/python", "-c", "import selenium"], timeoutMilliseconds: 30_000))?
            .status == 0
        {
            return "\(venv)/bin/python"
        }
        let made = try SystemProcess.run(["python3", "-m", "venv", venv], timeoutMilliseconds: 120_000)
        guard made.status == 0 else { throw TestFailure("cannot make a venv for Selenium: \(made.text)") }
        let installed = try SystemProcess.run(
            ["\(venv)/bin/pip", "install", "--quiet", "selenium>=4,<5"], timeoutMilliseconds: 240_000)
        guard installed.status == 0 else { throw TestFailure("cannot install Selenium (pip): \(installed.text)") }
        return "\(venv)/bin/python"
    }

    /// Runs `script` (a path) with `arguments` and a deadline of `seconds` (the script's own, then a kill 30 s
    /// later); its output is the failure message when it fails.
    package static func runScript(
        _ script: String, _ arguments: [String], python: String? = nil, seconds: Int = 240
    ) async throws {
        let interpreter: String
        if let python { interpreter = python } else { interpreter = try await Self.selenium.value }
        let run = try CLIProcess([script] + arguments + ["--deadline", String(seconds)], executable: interpreter)
        let status: Int32
        do { status = try await run.waitForExit(seconds: Double(seconds + 30)) } catch {
            run.signal(SIGKILL)
            _ = try? await run.waitForExit(seconds: 10)
            throw error
        }
        let name = script.split(separator: "/").last.map(String.init) ?? script
        #expect(status == 0, "\(name) \(arguments.first ?? ""):\n\((run.stdout + run.stderr).joined(separator: "\n"))")
    }
}
