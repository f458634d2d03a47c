import ArgumentParser
import SwitchyardClient
import SwitchyardSystem

/// The type that names one prompt command (swift-argument-parser tells subcommands apart by type).
protocol PromptCommandSpec {
    /// The prompt's word for the command, and the subcommand's name.
    static var keyword: String { get }
}

/// The prompt's help, split into lines once: swift-argument-parser reads every subcommand's configuration many times
/// while it parses a command line, and splitting the whole help each time cost `switchyard run` ~100M instructions
/// at start-up.
private let promptHelpLines: [Substring] = Interpreter.help.split(separator: "\n")

extension PromptCommandSpec {
    /// The command's lines in the prompt's `help` (with their continuation lines): the subcommand's help is the
    /// prompt's, so the two cannot say different things.
    static var promptHelp: [String] {
        var lines: [String] = []
        for line in promptHelpLines {
            if line.hasPrefix("  \(keyword) ") {
                lines.append(line.trimmingWhitespace)
            } else if !lines.isEmpty, line.hasPrefix("      ") {
                lines.append(line.trimmingWhitespace)
            } else if !lines.isEmpty {
                break
            }
        }
        return lines
    }

    /// What the first help line says the command does (after its syntax).
    static var abstract: String {
        let first = Array(promptHelp.first ?? keyword)
        // The syntax and the description are apart by a run of spaces.
        guard let gap = first.indices.dropLast().first(where: { first[$0] == " " && first[$0 + 1] == " " }) else {
            return "The prompt's `\(keyword)`, on a running host."
        }
        return "The prompt's `\(keyword)`, on a running host: " + String(first[gap...]).trimmingWhitespace + "."
    }
}

/// A prompt command as a client subcommand: `switchyard nav @root pop` sends a running host what `nav @root pop`
/// at its prompt does, through the same interpreter, so the name, the syntax and the output are the prompt's.
/// (In a shell, quote JSON params and the `>` between steps: `switchyard nav todos.todos pop '>' route todo '{"id":"7"}'`.)
struct PromptCommand<Spec: PromptCommandSpec>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Spec.keyword, abstract: Spec.abstract,
            discussion: "As at the prompt (in a shell, quote JSON params and the '>' between steps):\n"
                + Spec.promptHelp.joined(separator: "\n") + "\nFailures exit with status 1, or 69 when no host answers."
        )
    }

    @Argument(
        help: ArgumentHelp("The command's words, as typed after '\(Spec.keyword)' at the prompt.", valueName: "words"))
    var words: [String]

    @OptionGroup var client: ClientOptions

    /// Prints what the prompt would print, or fails (status 1) with its message.
    func run() async throws {
        var interpreter = Interpreter(app: RemoteSession(client: try client.connectAsync()))
        switch await interpreter.run(([Spec.keyword] + words).joined(separator: " ")) {
        case .ok(let output, _):
            if !output.isEmpty { StandardOutput.write(output.hasSuffix("\n") ? output : output + "\n") }
            // The prompt reports an invalid link as an answer; a script asking from a shell wants a status.
            if Spec.keyword == ValidateSpec.keyword, output.hasPrefix("invalid") {
                throw ExitCode(ExitStatus.failure.rawValue)
            }
        case .failed(let message, let status):
            throw RunFailure(status, message: message)
        case .quiet, .quit:
            break
        }
    }
}

enum ValidateSpec: PromptCommandSpec { static let keyword = "validate" }
enum NavSpec: PromptCommandSpec { static let keyword = "nav" }
enum DismissedSpec: PromptCommandSpec { static let keyword = "dismissed" }
enum ActionSpec: PromptCommandSpec { static let keyword = "action" }
enum QuerySpec: PromptCommandSpec { static let keyword = "query" }
enum ExpectSpec: PromptCommandSpec { static let keyword = "expect" }
enum WaitSpec: PromptCommandSpec { static let keyword = "wait" }
