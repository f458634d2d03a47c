import ArgumentParser
import Glibc
import SwitchyardSystem

/// `switchyard`: runs a composed app of coordinator plugins and talks to a running one.
@main
struct Switchyard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switchyard",
        abstract: "Compose navigation coordinators running as separate processes into one navigation tree.",
        discussion: """
            Shell completion: switchyard --generate-completion-script bash|zsh|fish (it completes --app from the \
            running hosts and --manifest from files).

            \(ExitStatus.table)
            """,
        version: "0.1.0",
        subcommands: [
            RunCommand.self, OpenCommand.self, PromptCommand<ValidateSpec>.self, PromptCommand<NavSpec>.self,
            PromptCommand<DismissedSpec>.self, PromptCommand<ActionSpec>.self, PromptCommand<QuerySpec>.self,
            TreeCommand.self, StatusCommand.self, UpgradeCommand.self, ReloadCommand.self,
            PromptCommand<ExpectSpec>.self, PromptCommand<WaitSpec>.self, WatchCommand.self, ShutdownCommand.self,
            StudioCommand.self,
            ChaosCommand.self, CheckPluginCommand.self, ContractCommand.self, InitCommand.self,
        ],
        defaultSubcommand: RunCommand.self
    )

    /// A harness that starts `switchyard` (the test suite) sets `SWITCHYARD_EXIT_WITH_PARENT` to its own pid, so a
    /// harness killed without cleaning up does not leave hosts behind: this process then shuts down as on SIGTERM.
    ///
    /// Parses and runs the command itself (as `AsyncParsableCommand.main` does) so that the CLI's own failures get
    /// their exit status and message without swift-argument-parser's usage text, which is only for usage errors.
    static func main() async {
        if let text = SystemProcess.environmentValue("SWITCHYARD_EXIT_WITH_PARENT"), let parent = Int32(text) {
            SystemProcess.terminateWhenProcessExits(parent)
        }
        do {
            var command = try parseAsRoot(nil)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let failure as RunFailure {
            Terminal.restoreAll()
            StandardError.write(failure.rendered)
            Glibc.exit(failure.status.rawValue)
        } catch {
            exit(withError: error)
        }
    }
}
