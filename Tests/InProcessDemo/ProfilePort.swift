import SwitchyardPlugin
import SwitchyardProtocol

// Plugins/python/profile.py, in Swift, for the in-process test tier (same route table, answers and log lines).

/// The profile tab: an overview, settings pushed, a sign-out confirmation and an undismissable sheet.
final class ProfileCoordinator: StackCoordinator, AppearanceObserving {
    @Root var overview = makeOverview
    @Route(
        .push, deepLink: "settings",
        actions: [
            ActionDeclaration(name: "save", params: [ParamDeclaration(name: "theme", type: .string, required: false)])
        ])
    var settings = makeSettings
    @Route(.modal, deepLink: "sign-out") var signOut = makeSignOut
    @Route(.modal, options: PresentationOptions(detents: ["medium"], interactiveDismissDisabled: true))
    var deleteAccount = makeDeleteAccount

    init() {}

    func makeOverview() -> Screen { Screen("Profile") }
    func makeSettings() -> Screen { Screen("Settings") }
    func makeSignOut() -> Screen { Screen("ConfirmSignOut") }
    func makeDeleteAccount() -> Screen { Screen("ConfirmDeleteAccount") }

    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        guard action.name == "save" else { return [] }
        log("profile: settings saved (\(action.params?["theme"]?.stringValue ?? "default"))")
        return [.pop(action.entry)]
    }

    func appeared(entry: EntryID) {
        log("profile: entry \(entry.rawValue) appeared")
        Task {
            let presented = try? await router.query(.presentedCount)
            log("profile: \(presented.map(Self.plain) ?? "None") presented")
        }
    }

    func dismissed(route: String, entry: EntryID, reason: CoordinatorDismissedNotification.Reason) {
        log("profile: \(route) dismissed by \(reason.rawValue)")
    }

    /// A JSON value as Python's `%s` prints it.
    private static func plain(_ value: JSONValue) -> String {
        switch value {
        case .int(let number): "\(number)"
        case .string(let text): text
        case .bool(let flag): flag ? "True" : "False"
        case .null: "None"
        default: "\(value)"
        }
    }
}

/// The in-process stand-in of the demo's `profile` plugin.
nonisolated let profilePort = Plugin("profile", version: "1.0.0", coordinators: [ProfileCoordinator.self])
