import InProcessDemo
import SwitchyardNavigation
import SwitchyardPlugin
import SwitchyardPluginTesting
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The in-process tier plays the demo's Python and Node plugins with Swift stand-ins (`InProcessDemo`); a stand-in is
/// only worth its tests if it declares what the real plugin declares. Each is held to its plugin's committed route
/// contract (Plugins/demo/contracts, which `DemoContractTests` keeps equal to what the real plugin exports): no change
/// at all between the two, in either direction, but for what the Swift SDK cannot declare (named below).
@Suite("The in-process stand-ins of the demo's Python and Node plugins", .timeLimit(.minutes(1)))
@MainActor
struct DemoPortTests {
    /// What the Swift SDK says differently, made alike before comparing: a Swift route that takes no input declares
    /// that it takes no params, where Python and Node leave them undeclared (so any are accepted); and a Swift plugin
    /// cannot declare params on its own coordinator types (it hands a local child over through them), nor so the
    /// params a route passes to one.
    static func alike(_ standIn: RouteContract, _ committed: RouteContract) -> (RouteContract, RouteContract) {
        var (standIn, committed) = (standIn, committed)
        for (name, type) in committed.types {
            guard var swift = standIn.types[name] else { continue }
            if type.params != nil, swift.params == nil { committed.types[name]?.params = nil }
            for (route, declared) in type.routes {
                if declared.params == nil, swift.routes[route]?.params?.isEmpty == true {
                    swift.routes[route]?.params = nil
                }
                if declared.targetParams != nil, let target = declared.target,
                    target.plugin == nil || target.plugin == committed.plugin.name,
                    swift.routes[route]?.targetParams == nil
                {
                    committed.types[name]?.routes[route]?.targetParams = nil
                }
            }
            standIn.types[name] = swift
        }
        return (standIn, committed)
    }

    @Test(
        "each stand-in declares exactly its plugin's contract", arguments: ["unauthenticated", "profile", "projects"])
    func sameContract(_ name: String) async throws {
        let port = try #require(InProcessDemo.plugins[name])
        let connection = PluginTestConnection(port)
        let answer = try await connection.initialize(pluginName: name)
        let standIn = RouteContract(
            plugin: answer.plugin, protocolVersion: answer.protocolVersion, coordinators: answer.coordinators)
        let committed = try RouteContract(
            parsing: try FileSystem.readRegularFile(
                "\(packageRoot)/Plugins/demo/contracts/\(name).json", maxBytes: 1 << 20))
        let (swift, real) = Self.alike(standIn, committed)
        let changes = ContractComparison.diff(real, swift) + ContractComparison.diff(swift, real)
        #expect(changes.isEmpty, "\(name): \(changes.map(\.description).joined(separator: "\n"))")
    }
}
