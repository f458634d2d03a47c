import ArgumentParser
import SwitchyardUV

/// `switchyard`: runs a composed app of coordinator plugins and talks to a running one.
@main
struct Switchyard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switchyard",
        abstract: "Compose navigation coordinators running as separate processes into one navigation tree.",
        version: "0.1.0",
        subcommands: [
            RunCommand.self, OpenCommand.self, TreeCommand.self, WatchCommand.self, StatusCommand.self, ShutdownCommand.self, ChaosCommand.self,
            CheckPluginCommand.self,
        ],
        defaultSubcommand: RunCommand.self
    )

    /// A harness that starts `switchyard` (the test suite) sets `SWITCHYARD_EXIT_WITH_PARENT` to its own pid, so a
    /// harness killed without cleaning up does not leave hosts behind: this process then shuts down as on SIGTERM.
    static func main() async {
        if let text = SystemProcess.environmentValue("SWITCHYARD_EXIT_WITH_PARENT"), let parent = Int32(text) {
            SystemProcess.terminateWhenProcessExits(parent)
        }
        await main(nil)
    }
}
