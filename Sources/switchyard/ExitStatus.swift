import ArgumentParser
import SwitchyardHost
import SwitchyardProtocol

/// The CLI's exit statuses: sysexits(3) where one fits, so scripts can tell a typo from an app that is down.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// A command failed: a script line, an expectation, a request the host refused.
    case failure = 1
    /// EX_USAGE: an unknown option or a malformed argument (swift-argument-parser's own).
    case usage = 64
    /// EX_DATAERR: the manifest, a contract, an experiment file or a saved history is invalid.
    case dataError = 65
    /// EX_NOINPUT: a file to read is missing or unreadable (the manifest, a script, a contract).
    case noInput = 66
    /// EX_UNAVAILABLE: no host answers (in time), another host already serves the app, the app cannot start, or the
    /// studio's port is in use.
    case unavailable = 69
    /// EX_SOFTWARE: a bug in switchyard.
    case software = 70
    /// EX_CANTCREAT: the `--state` or `--trace` file cannot be created (a missing or read-only folder), or
    /// `init plugin` would overwrite a file or cannot write one.
    case cannotCreate = 73

    /// The table `switchyard --help` and Docs/CLI.md print.
    static let table = """
        EXIT STATUS
          0   success
          1   a command failed: a script line, an expectation, a request the host refused (its typed error is printed)
          64  usage: an unknown option or a malformed argument
          65  the manifest, a contract, an experiment or a saved history is invalid (printed as file:line:column: error: …)
          66  a file to read is missing or unreadable: the manifest, a script, a contract, an experiment, a history
          69  unavailable: no host answers at the socket (in time), another host already serves the app, the app cannot
              start, or the studio's port is in use
          70  internal error (a bug: please report it)
          73  a file cannot be created: the --state or --trace file (its folder is missing or read-only; see --state-optional),
              or a file of init plugin (it exists already, or its folder cannot be written)
        """
}

/// A failure that ends the CLI with `status` and `message` on stderr (`switchyard: error: …`, or as given when the
/// message already says where, like a manifest's `file:line:column: error: …`), without the usage text.
struct RunFailure: Error, CustomStringConvertible {
    let status: ExitStatus
    let message: String
    /// The message is printed as it is (it carries its own `…: error:` prefix).
    var formatted = false
    /// Nothing is printed: a child process (the studio) has said why already.
    var silent = false

    init(_ status: ExitStatus = .failure, message: String, formatted: Bool = false) {
        self.status = status
        self.message = message
        self.formatted = formatted
    }

    init(message: String) { self.init(.failure, message: message) }

    /// Ends with `status` and prints nothing: the failure's message is on stderr already.
    static func silent(_ status: ExitStatus) -> RunFailure {
        var failure = RunFailure(status, message: "")
        failure.silent = true
        return failure
    }

    var description: String { message }

    /// What stderr gets.
    var rendered: String {
        if silent { return "" }
        let text = formatted ? message : "switchyard: error: \(message)"
        return text.hasSuffix("\n") ? text : text + "\n"
    }

    /// A manifest refused: its diagnostics as they are (`file:line:column: error: …`), status 66 when the file could
    /// not be read, 65 when it is wrong.
    init(_ error: ManifestError) {
        self.init(error.kind == .unreadable ? .noInput : .dataError, message: error.description, formatted: true)
    }

    /// A typed error from a host, as the CLI prints it everywhere: `code (number): message`, and under it the
    /// traceback, stack or stderr lines a plugin's failure carries (`ResponseError.authorDetails`).
    static func describe(_ error: ResponseError) -> String { error.descriptionWithDetails }
}
