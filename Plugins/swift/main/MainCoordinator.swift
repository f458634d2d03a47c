import SwitchyardPlugin
import SwitchyardProtocol

/// The app's root (Stinsen README's MainCoordinator): unauthenticated or authenticated, switched with setRoot.
final class MainCoordinator: StackCoordinator, StatefulCoordinator {
    nonisolated struct State: Codable, Sendable {
        var user: String?
    }

    @Root(target: .coordinator("unauthenticated", in: "unauthenticated"), deepLink: "") var unauthenticated =
        makeUnauthenticated
    @Root(target: .coordinator("home", in: "authenticated"), deepLink: "", param: "user") var authenticated =
        makeAuthenticated
    @Route(.modal, deepLink: "about") var about = makeAbout

    var state = State()

    init() {}

    /// A user already signed in (`--user NAME` in the manifest, for demos) starts on the authenticated root.
    func initialRoot() -> RootSelection<MainCoordinator>? {
        guard let user = Session.storedUser else { return nil }
        return root(\.authenticated, user)
    }
}
