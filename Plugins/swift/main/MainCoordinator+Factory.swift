import SwitchyardPlugin
import SwitchyardProtocol

extension MainCoordinator {
    func makeUnauthenticated() -> PluginCoordinator {
        state.user = nil
        return PluginCoordinator()
    }

    /// The guard: only a known, unlocked user gets in.
    func makeAuthenticated(_ user: String) throws -> PluginCoordinator {
        guard !user.isEmpty else { throw Rejection("sign in first") }
        guard !Session.lockedUsers.contains(user) else { throw Rejection("the account '\(user)' is locked") }
        state.user = user
        Session.expireLater(self)
        return PluginCoordinator(["user": .string(user)])
    }

    func makeAbout() -> Screen {
        Screen("About", title: "About", ["version": "1.0.0"]) {
            Image(systemName: "info.circle")
            Text("Switchyard demo").font(.title)
            Text("Version 1.0.0: six coordinator plugins in Swift, Python and Node, one navigation tree.")
        }
    }
}

/// Sign-in state. Stinsen's MainCoordinator switches root when the authentication status changes; here a session
/// can expire (--session-ttl-ms), and the coordinator's own logic then navigates with its router.
enum Session {
    static let lockedUsers: Set<String> = ["mallory"]

    static var storedUser: String? { PluginArguments.value("--user") }

    @MainActor
    static func expireLater(_ coordinator: MainCoordinator) {
        guard let text = PluginArguments.value("--session-ttl-ms"), let milliseconds = Int(text) else { return }
        Task { @MainActor in
            try? await Task.sleep(for: .milliseconds(milliseconds))
            guard coordinator.state.user != nil else { return }
            do {
                try await coordinator.router.setRoot(\.unauthenticated)
                coordinator.log("session expired; back to sign-in")
            } catch {
                coordinator.log("could not end the session: \(error)", level: .warning)
            }
        }
    }
}
