// The smallest Swift plugin: one stack coordinator type with a root screen and a route with a param.
import SwitchyardPlugin

final class HelloCoordinator: StackCoordinator {
    @Root var greeting = makeGreeting
    @Route(.push, deepLink: "details/:id") var details = makeDetails

    init() {}

    func makeGreeting() -> Screen { Screen("Greeting") }
    func makeDetails(_ id: String) -> Screen { Screen("Details", ["id": .string(id)]) }
}

Plugin("hello-swift", version: "1.0.0", coordinators: [HelloCoordinator.self]).run()
