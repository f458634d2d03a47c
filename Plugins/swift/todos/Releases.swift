import Glibc
import SwitchyardPlugin
import SwitchyardProtocol

/// Which release of the todos plugin this process is, so one build plays each version an upgrade replaces it with
/// (Protocol/README.md §20; the upgrade tests and the README's walk-through use it):
///
/// - `--release VERSION`: the version `initialize` reports (default 1.0.0);
/// - `--with-history` (release 1.1): the todos flow gains a `history` route, a compatible change (`ROUTE_ADDED`);
/// - `--share-state-v2` (release 1.2): the share flow's state field `todo` is renamed `todoID`, and states an earlier
///   release wrote are migrated (`StatefulCoordinator.migrate(from:state:)`);
/// - `--without ROUTE`: the todos flow leaves ROUTE out (an upgrade to it is refused while the app uses the route);
/// - `--crash-on-route`: the process exits when it is asked for a todo (a version that crashes after the switch).
nonisolated enum TodosRelease {
    static let arguments = Array(CommandLine.arguments.dropFirst())
    static let version = value(after: "--release") ?? "1.0.0"
    static let withHistory = arguments.contains("--with-history")
    static let without = Set(
        arguments.indices.dropLast().filter { arguments[$0] == "--without" }.map { arguments[$0 + 1] })
    static let crashOnRoute = arguments.contains("--crash-on-route")

    /// The todos flow's routes this release leaves out.
    static var disabledRoutes: Set<String> { without.union(withHistory ? [] : ["history"]) }

    /// Ends the process as a crash would, when this release is the one that crashes.
    static func crashIfAsked() { if crashOnRoute { exit(3) } }
    /// The name under which the share flow's state keeps its todo.
    static let shareStateKey = arguments.contains("--share-state-v2") ? "todoID" : "todo"

    private static func value(after flag: String) -> String? {
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }
}

extension TodosCoordinator {
    /// Release 1.1's pushed screen: what was completed so far.
    func makeHistory() -> Screen { Screen("History", ["completed": .int(Int64(state.completed.count))]) }
}

/// The share flow's state under the field name of this release.
nonisolated extension ShareCoordinator.State {
    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        todo = try container.decode(String.self, forKey: Key(stringValue: TodosRelease.shareStateKey))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(todo, forKey: Key(stringValue: TodosRelease.shareStateKey))
    }
}

extension ShareCoordinator {
    /// Release 1.2 renamed `todo` to `todoID`: it takes over states written under the old name (Erlang's
    /// `code_change`); a rollback to an earlier release renames it back.
    static func migrate(from version: String, state: JSONValue) throws -> State {
        let (old, new) = TodosRelease.shareStateKey == "todoID" ? ("todo", "todoID") : ("todoID", "todo")
        guard case .object(var fields) = state, fields[new] == nil, let todo = fields[old] else {
            return try Coding.decode(State.self, from: state)
        }
        fields[old] = nil
        fields[new] = todo
        return try Coding.decode(State.self, from: .object(fields))
    }
}
