import SwitchyardPlugin

/// The profile tab, written by the "profile team" in its own package: overview, settings pushed, sign-out modal.
/// Same type name and routes as the Python plugin it replaces, so the authenticated tabs compose unchanged.
final class ProfileCoordinator: StackCoordinator {
    static let typeName = "profile"

    @Root var overview = makeOverview
    @Route(.push, deepLink: "settings") var settings = makeSettings
    @Route(.modal, deepLink: "sign-out") var signOut = makeSignOut

    init() {}

    func makeOverview() -> Screen { Screen("Profile", ["team": "profile", "language": "swift"]) }
    func makeSettings() -> Screen { Screen("Settings") }
    func makeSignOut() -> Screen { Screen("ConfirmSignOut") }

    func dismissed(route: String, entry: EntryID, reason: CoordinatorDismissedNotification.Reason) {
        print("\(route) dismissed (\(reason.rawValue))")  // goes to stderr, then to the host log as [profile]
    }
}

Plugin("profile", version: "2.0.0", coordinators: [ProfileCoordinator.self]).run()
