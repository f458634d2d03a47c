import ArgumentParser

/// `switchyard`: runs a composed app of coordinator plugins and talks to a running one.
@main
struct Switchyard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switchyard",
        abstract: "Compose navigation coordinators running as separate processes into one navigation tree.",
        version: "0.1.0",
        subcommands: [RunCommand.self, OpenCommand.self, TreeCommand.self, WatchCommand.self, StatusCommand.self, ShutdownCommand.self, ChaosCommand.self],
        defaultSubcommand: RunCommand.self
    )
}
