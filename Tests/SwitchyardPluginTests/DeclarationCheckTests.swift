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

/// Factory inputs a route's params (one JSON object) cannot be decoded into: each call would fail with "expected a
/// string, found object".
final class UncarriedInputsCoordinator: StackCoordinator {
    enum Filter: String, Codable { case all, open, done }
    enum Priority: Int, Codable { case low = 1, high = 2 }

    @Root var home = makeHome
    @Route(.push, deepLink: "todos/:filter") var todos = makeTodos
    @Route(.push) var urgent = makeUrgent
    @Route(.push) var batch = makeBatch

    init() {}

    func makeHome() -> Screen { Screen("Home") }
    func makeTodos(_ filter: Filter) -> Screen { Screen("Todos", ["filter": .string(filter.rawValue)]) }
    func makeUrgent(_ priority: Priority) -> Screen { Screen("Urgent") }
    func makeBatch(_ ids: [String]) -> Screen { Screen("Batch") }
}

/// The fix the message gives: the enum as a ``RouteParameter``, sent as one named param.
enum TodoFilter: String, RouteParameter {
    case all, open, done
    static var paramType: ParamType { .string }
}

final class CarriedEnumCoordinator: StackCoordinator {
    @Root var home = makeHome
    @Route(.push, deepLink: "todos/:filter") var todos = makeTodos

    init() {}

    func makeHome() -> Screen { Screen("Home") }
    func makeTodos(_ filter: TodoFilter) -> Screen { Screen("Todos", ["filter": .string(filter.rawValue)]) }
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

    @Test(
        "a factory input the params object cannot carry (a String- or Int-backed enum, an array) fails the handshake, naming the type, the route, the input type and the fix"
    )
    func inputTheParamsCannotCarry() async throws {
        let connection = PluginTestConnection(Plugin("inputs", coordinators: [UncarriedInputsCoordinator.self]))
        let error = await #expect(throws: ResponseError.self) { try await connection.initialize() }
        #expect(error?.code == .compositionError)
        #expect(
            error?.message.split(separator: "; ").map(String.init) == [
                "uncarriedInputs (UncarriedInputsCoordinator): route 'todos': the factory's input Filter is a single value, but a route's params travel as a JSON object: make it a RouteParameter (`extension Filter: RouteParameter { public static var paramType: ParamType { .string } }`), sent as the one param 'filter', or take a Codable struct with a property of that type",
                "uncarriedInputs (UncarriedInputsCoordinator): route 'urgent': the factory's input Priority is a single value, but a route's params travel as a JSON object: make it a RouteParameter (`extension Priority: RouteParameter { public static var paramType: ParamType { .integer } }`), sent as the one param 'value', or take a Codable struct with a property of that type",
                "uncarriedInputs (UncarriedInputsCoordinator): route 'batch': the factory's input Array<String> is an array, but a route's params travel as a JSON object: take a Codable struct with a property of that type",
            ])
    }

    @Test("the fix the message gives works: the enum as a RouteParameter travels as one param, checked by the host")
    func enumAsRouteParameter() async throws {
        let connection = PluginTestConnection(Plugin("inputs", coordinators: [CarriedEnumCoordinator.self]))
        let result = try await connection.initialize()
        let todos = try #require(result.coordinators.first?.routes.first { $0.name == "todos" })
        #expect(todos.params == [ParamDeclaration(name: "filter", type: .string)])
        _ = try await connection.create(.init(instance: InstanceID(1), type: "carriedEnum", reason: .new))
        let shown = try await connection.route(
            .init(
                instance: InstanceID(1), type: "carriedEnum", route: "todos", transition: .push,
                params: ["filter": "open"]))
        #expect(shown.content == .screen(ScreenDescriptor(name: "Todos", props: ["filter": "open"])))
    }
}
