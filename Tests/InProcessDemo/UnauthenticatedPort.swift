import SwitchyardPlugin
import SwitchyardProtocol

// Plugins/python/unauthenticated.py, in Swift, for the in-process test tier: the same route table (DemoPortTests
// holds it to the plugin's committed contract) and the same answers.

/// The unauthenticated flow: login, forgot password as a modal, registration as a child coordinator.
final class UnauthenticatedCoordinator: StackCoordinator {
    @Root var login = makeLogin
    @Route(.modal, deepLink: "forgot") var forgotPassword = makeForgotPassword
    @Route(.push, deepLink: "register") var registration = makeRegistration

    init() {}

    func makeLogin() -> Screen { Screen("Login") }

    func makeForgotPassword() -> Screen {
        Screen("ForgotPassword", ["email": .string(deepLink?.query["email"] ?? "")])
    }

    func makeRegistration() -> RegistrationCoordinator { RegistrationCoordinator() }
}

/// Registration; finishing it signs the new user in by asking Main, an ancestor in another plugin, to switch root.
final class RegistrationCoordinator: StackCoordinator {
    @Root var form = makeForm
    @Route(.modal) var terms = makeTerms
    @Route(.push, param: "user") var done = makeDone

    init() {}

    func makeForm() -> Screen { Screen("RegistrationForm") }

    func makeTerms() -> Screen { Screen("Terms") }

    func makeDone(_ user: String) throws -> Screen {
        guard !user.trimmingWhitespace.isEmpty else { throw Rejection("choose a user name") }
        // registration -> unauthenticated -> main; sent after this answer, as the Python plugin's navigate is.
        let chain = router.chain.parent.parent.setRoot("authenticated", params: ["user": .string(user)])
        Task { _ = try? await chain.apply() }
        return Screen("Welcome", ["user": .string(user)])
    }
}

extension String {
    fileprivate var trimmingWhitespace: Substring {
        var text = self[...]
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}

/// The in-process stand-in of the demo's `unauthenticated` plugin.
nonisolated let unauthenticatedPort = Plugin(
    "unauthenticated", version: "1.0.0", coordinators: [UnauthenticatedCoordinator.self, RegistrationCoordinator.self])
