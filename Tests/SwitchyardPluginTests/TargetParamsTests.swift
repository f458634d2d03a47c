import SwitchyardPlugin
import SwitchyardPluginTesting
import Testing

/// A route opening another plugin's coordinator, with the params it passes declared (the route table's
/// `targetParams`, Protocol/README.md §5): what that plugin's composition checks against its type's params.
final class LinksCoordinator: StackCoordinator {
    @Root var home = makeHome
    @Route(
        .push, target: .coordinator("project", in: "projects", params: [ParamDeclaration(name: "id", type: .string)]),
        deepLink: "project/:id")
    var project = makeProject
    @Route(.push, target: .coordinator("profile", in: "profile")) var profile = makeProfile

    init() {}

    func makeHome() -> Screen { Screen("Links") }
    func makeProject(_ id: String) -> PluginCoordinator { PluginCoordinator(["id": .string(id)]) }
    func makeProfile() -> PluginCoordinator { PluginCoordinator() }
}

@Suite("Swift SDK: declared target params", .timeLimit(.minutes(1)))
struct TargetParamsTests {
    @Test("a target's params become the route's targetParams; a target without them declares none")
    func declared() async throws {
        let connection = PluginTestConnection(Plugin("links", coordinators: [LinksCoordinator.self]))
        let routes = try #require(try await connection.initialize().coordinators.first?.routes)
        #expect(routes.first { $0.name == "project" }?.targetParams == [ParamDeclaration(name: "id", type: .string)])
        #expect(
            routes.first { $0.name == "project" }?.target == CoordinatorReference(plugin: "projects", type: "project"))
        #expect(routes.first { $0.name == "profile" }?.targetParams == nil)
    }
}
