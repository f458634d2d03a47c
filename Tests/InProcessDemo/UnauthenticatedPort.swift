import SwitchyardPlugin
import SwitchyardProtocol

// Plugins/python/unauthenticated.py, in Swift, for the in-process test tier: the same route table (DemoPortTests
// holds it to the plugin's committed contract) and the same answers.

nonisolated private let user = ParamDeclaration(name: "user", type: .string)

/// The unauthenticated flow: login, forgot password as a modal, registration as a child coordinator. The login
/// form's Sign in asks Main, an ancestor in another plugin, to switch to the authenticated root.
final class UnauthenticatedCoordinator: StackCoordinator {
    @Root(
        actions: [
            ActionDeclaration(name: "signIn", params: [user, ParamDeclaration(name: "password", type: .string)]),
            "forgotPassword", "register",
        ])
    var login = makeLogin
    @Route(
        .modal, deepLink: "forgot",
        actions: [ActionDeclaration(name: "send", params: [ParamDeclaration(name: "email", type: .string)])])
    var forgotPassword = makeForgotPassword
    @Route(.push, deepLink: "register") var registration = makeRegistration

    init() {}

    func makeLogin() -> Screen {
        Screen("Login", title: "Sign in") {
            Image(systemName: "person.crop.circle")
            Text("Welcome back").font(.title)
            Text("Sign in to see your todos and projects.").font(.caption)
            TextField("User", id: "user", prompt: "alice")
            SecureField("Password", id: "password", prompt: "any password")
            Button("Sign in", style: .primary, action: "signIn", inputs: ["user", "password"])
            Button("Forgot password?", action: "forgotPassword")
            Button("Create an account", action: "register")
        }
    }

    func makeForgotPassword() -> Screen {
        let email = deepLink?.query["email"] ?? ""
        return Screen("ForgotPassword", title: "Reset password", ["email": .string(email)]) {
            Text("Forgot your password?").font(.headline)
            Text("Enter your email and we will send you a link to choose a new one.")
            TextField("Email", id: "email", text: email, prompt: "alice@example.com")
            Button("Send link", style: .primary, symbol: "envelope", action: "send", inputs: ["email"])
        }
    }

    func makeRegistration() -> RegistrationCoordinator { RegistrationCoordinator() }

    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        switch action.name {
        case "signIn":
            let name = action.params?["user"]?.stringValue?.trimmingWhitespace ?? ""
            guard !name.isEmpty else { throw Rejection("enter your user name") }
            guard action.params?["password"]?.stringValue?.isEmpty == false else {
                throw Rejection("enter your password")
            }
            return [.parent, .setRoot("authenticated", ["user": .string(String(name))])]
        case "forgotPassword": return [.route("forgotPassword")]
        case "register": return [.route("registration")]
        case "send":
            let email = action.params?["email"]?.stringValue ?? ""
            guard email.contains("@") else { throw Rejection("enter the email address of your account") }
            log("unauthenticated: a reset link goes to \(email)")
            return [.dismiss]
        default: return []
        }
    }
}

/// Registration; finishing it signs the new user in by asking Main, an ancestor in another plugin, to switch root.
final class RegistrationCoordinator: StackCoordinator {
    @Root(actions: [ActionDeclaration(name: "create", params: [user]), "terms"]) var form = makeForm
    @Route(.modal) var terms = makeTerms
    @Route(.push, param: "user") var done = makeDone

    init() {}

    func makeForm() -> Screen {
        Screen("RegistrationForm", title: "Create an account") {
            TextField("User name", id: "user", prompt: "alice")
            Button("Create account", style: .primary, action: "create", inputs: ["user"])
            Button("Terms of use", action: "terms")
        }
    }

    func makeTerms() -> Screen { Screen("Terms") }

    func makeDone(_ user: String) throws -> Screen {
        guard !user.trimmingWhitespace.isEmpty else { throw Rejection("choose a user name") }
        // registration -> unauthenticated -> main; sent after this answer, as the Python plugin's navigate is.
        let chain = router.chain.parent.parent.setRoot("authenticated", params: ["user": .string(user)])
        Task { _ = try? await chain.apply() }
        return Screen("Welcome", ["user": .string(user)])
    }

    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        switch action.name {
        case "create": [.route("done", ["user": .string(action.params?["user"]?.stringValue ?? "")])]
        case "terms": [.route("terms")]
        default: []
        }
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
