import SwitchyardPlugin
import SwitchyardPluginTesting
import SwitchyardProtocol
import Testing

/// Deep-link captures the route's params do not declare: every matching link would be refused at run time.
final class MistakesCoordinator: StackCoordinator {
    @Root var home = makeHome
    @Route(.push, deepLink: "item/:id") var item = makeItem
    @Route(.push, deepLink: "order/:id", param: "orderID") var order = makeOrder
    @Route(.push, deepLink: "search/{query}") var search = makeSearch

    struct Search: Codable { var text: String }

    init() {}

    func makeHome() -> Screen { Screen("Home") }
    func makeItem() -> Screen { Screen("Item") }
    func makeOrder(_ id: String) -> Screen { Screen("Order", ["id": .string(id)]) }
    func makeSearch(_ search: Search) -> Screen { Screen("Search") }
}

/// Issue 15: the Swift SDK refuses, at the handshake, what the host's composition would refuse later and what would
/// otherwise fail only when a link is followed. A route without its factory cannot be written (the factory is the
/// property's value); the pattern is a runtime string, so a capture it lacks is found when the type is registered.
@Suite("Swift SDK: declarations that would fail at run time", .timeLimit(.minutes(1)))
struct DeclarationCheckTests {
    @Test(
        "a capture the factory's input does not carry fails the handshake, naming the type, the route and the capture")
    func captureWithoutParam() async throws {
        let connection = PluginTestConnection(Plugin("mistakes", coordinators: [MistakesCoordinator.self]))
        let error = await #expect(throws: ResponseError.self) { try await connection.initialize() }
        #expect(error?.code == .compositionError)
        #expect(
            error?.message.split(separator: "; ").map(String.init) == [
                "mistakes (MistakesCoordinator): route 'item': deep-link pattern 'item/:id' captures 'id', but its factory takes no input: give the factory a parameter (`(_ id: String) -> …`), or drop the capture",
                "mistakes (MistakesCoordinator): route 'order': deep-link pattern 'order/:id' captures 'id', but the route's params are only 'orderID': name the input 'id' (`param:` or a property of the input type), or drop the capture",
                "mistakes (MistakesCoordinator): route 'search': deep-link pattern 'search/{query}' captures 'query', but the route's params are only 'text': name the input 'query' (`param:` or a property of the input type), or drop the capture",
            ])
    }
}
