// The benchmark's Swift SDK plugin: one stack type, "bench", whose routes cost nothing beyond the SDK itself
// (no I/O in the factories), so the measures show the protocol path, not demo logic.
//
//   --peer NAME   the plugin whose "bench" type the `remote` route opens (the scale measure chains 50 plugins)
import SwitchyardPlugin

final class BenchCoordinator: StackCoordinator, StatefulCoordinator {
    static let typeName = "bench"

    nonisolated struct State: Codable, Sendable {
        var opened = 0
    }

    @Root var home = makeHome
    @Route(.push, deepLink: "item/:id") var item = makeItem
    @Route(.push, deepLink: "sub") var sub = makeSub
    @Route(.push, target: .coordinator("bench", in: PluginArguments.value("--peer") ?? "bench"), deepLink: "remote")
    var remote = makeRemote

    var state = State()

    init() {}

    func makeHome() -> Screen { Screen("Home") }

    func makeItem(_ id: String) -> Screen {
        state.opened += 1
        return Screen("Item", ["id": .string(id)])
    }

    func makeSub() -> BenchCoordinator { BenchCoordinator() }
    func makeRemote() -> PluginCoordinator { PluginCoordinator() }
}

Plugin("bench", version: "1.0.0", coordinators: [BenchCoordinator.self]).run()
