import SwitchyardPlugin
import SwitchyardProtocol

// Plugins/python/profile.py, in Swift, for the in-process test tier (same route table, answers and log lines).

/// The profile tab: an overview, settings pushed, a sign-out confirmation and an undismissable sheet.
final class ProfileCoordinator: StackCoordinator, AppearanceObserving {
    @Root(actions: ["settings", "signOut", "deleteAccount"]) var overview = makeOverview
    @Route(
        .push, deepLink: "settings",
        actions: [
            ActionDeclaration(name: "save", params: [ParamDeclaration(name: "theme", type: .string, required: false)])
        ])
    var settings = makeSettings
    @Route(.modal, deepLink: "sign-out", actions: ["confirm", "cancel"]) var signOut = makeSignOut
    @Route(
        .modal, actions: ["keep"], options: PresentationOptions(detents: ["medium"], interactiveDismissDisabled: true))
    var deleteAccount = makeDeleteAccount

    init() {}

    func makeOverview() -> Screen {
        Screen("Profile", title: "Profile") {
            Image(systemName: "person.crop.circle")
            Text("Your profile").font(.title)
            Text("Written in Python: this tab is a plugin of its own.").font(.caption)
            List {
                Section { Row("Settings").symbol("gearshape").action("settings") }
                Section { Row("Delete account").symbol("trash").action("deleteAccount") }
            }
            Button("Sign out", style: .destructive, symbol: "rectangle.portrait.and.arrow.right", action: "signOut")
        }
    }

    func makeSettings() -> Screen {
        Screen("Settings", title: "Settings") {
            Picker(
                "Theme", id: "theme", selection: "system",
                options: [
                    PickerOption("system", "System"), PickerOption("light", "Light"), PickerOption("dark", "Dark"),
                ])
            Button("Save", style: .primary, action: "save", inputs: ["theme"])
        }
    }

    func makeSignOut() -> Screen {
        Screen("ConfirmSignOut", title: "Sign out") {
            Text("Sign out?").font(.headline)
            Text("You can sign in again at any time; your todos stay where they are.")
            Button("Sign out", style: .destructive, action: "confirm")
            Button("Cancel", action: "cancel")
        }
    }

    func makeDeleteAccount() -> Screen {
        Screen("ConfirmDeleteAccount", title: "Delete account") {
            Image(systemName: "exclamationmark.triangle")
            Text("Accounts of this demo cannot be deleted.").font(.headline)
            Button("Keep my account", style: .primary, action: "keep")
        }
    }

    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        switch action.name {
        case "save":
            log("profile: settings saved (\(action.params?["theme"]?.stringValue ?? "default"))")
            return [.pop(action.entry)]
        case "settings", "signOut", "deleteAccount": return [.route(action.name)]
        case "cancel", "keep": return [.dismiss]
        // profile -> the tab bar (authenticated) -> Main: Main's signed-out root replaces the signed-in one.
        case "confirm": return [.parent, .parent, .setRoot("unauthenticated")]
        default: return []
        }
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
