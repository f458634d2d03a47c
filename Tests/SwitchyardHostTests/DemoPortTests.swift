import InProcessDemo
import SwitchyardHost
import SwitchyardHostTestSupport
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
@Suite("The in-process stand-ins of the demo's Python and Node plugins", .heavy, .timeLimit(.minutes(2)))
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

    @Test(
        "each stand-in shows what its plugin shows: the demo tapped through in both tiers makes the same trees, screens as data included"
    )
    func sameScreens() async throws {
        let standIns = try await withHost(
            TestPlugins.demo(), tier: .inProcess, root: TestPlugins.demoRoot, Self.tapThrough)
        let plugins = try await withHost(
            TestPlugins.demo(), tier: .processes, root: TestPlugins.demoRoot, Self.tapThrough)
        #expect(standIns.map(\.step) == plugins.map(\.step))
        for (standIn, plugin) in zip(standIns, plugins) {
            let standIn = (step: standIn.step, tree: Self.withoutProjectState(standIn.tree))
            let differing = zip(standIn.tree.instances, plugin.tree.instances).filter { $0 != $1 }
            #expect(
                standIn.tree == plugin.tree,
                "after \(plugin.step): \(differing.map { "\n  stand-in: \($0)\n  plugin:   \($1)" }.joined())")
        }
    }

    /// The Swift stand-in of the Node `project` coordinator keeps the project's id as its state (how a Swift plugin
    /// hands a local child its input); the Node one reads it from its params and keeps no state.
    nonisolated static func withoutProjectState(_ tree: TreeSnapshot) -> TreeSnapshot {
        var tree = tree
        for index in tree.instances.indices
        where (tree.instances[index].plugin, tree.instances[index].type) == ("projects", "project") {
            tree.instances[index].state = nil
        }
        return tree
    }

    /// The demo's screens of the three plugins the stand-ins play, tapped as a user taps them (each action the one
    /// the screen's content names): the tree after each step.
    nonisolated static func tapThrough(_ host: HostHandle) async throws -> [(step: String, tree: TreeSnapshot)] {
        var trees = [(step: "start", tree: await host.snapshot())]
        func top(_ plugin: String, _ type: String) async throws -> (InstanceID, EntryID) {
            let instance = try #require(await host.snapshot().find(plugin, type), "no \(plugin).\(type)")
            return (instance.id, try #require(instance.entries?.last?.entry ?? instance.root?.entry))
        }
        func tap(_ plugin: String, _ type: String, _ action: String, _ params: JSONValue? = nil) async throws {
            let (instance, entry) = try await top(plugin, type)
            _ = try await host.userAction(instance: instance, entry: entry, action: action, params: params)
            trees.append(("\(action) on \(plugin).\(type)", await host.snapshot()))
        }
        func navigate(_ plugin: String, _ type: String, _ steps: [NavigationStep]) async throws {
            let instance = try #require(await host.snapshot().find(plugin, type), "no \(plugin).\(type)")
            _ = try await host.navigate(from: instance.id, steps)
            trees.append(("\(steps.map(\.summary)) from \(plugin).\(type)", await host.snapshot()))
        }
        try await tap("unauthenticated", "unauthenticated", "forgotPassword")
        try await tap("unauthenticated", "unauthenticated", "send", ["email": "alice@example.com"])
        try await tap("unauthenticated", "unauthenticated", "register")
        try await navigate("unauthenticated", "unauthenticated", [.popToRoot])
        try await tap("unauthenticated", "unauthenticated", "signIn", ["user": "alice", "password": "secret"])
        try await navigate("authenticated", "home", [.selectTab("projects")])
        try await tap("projects", "projects", "open", ["id": "p1"])
        try await tap("projects", "project", "settings")
        try await tap("projects", "project", "close")
        try await tap("projects", "project", "members")
        try await navigate("authenticated", "home", [.selectTab("profile")])
        try await tap("profile", "profile", "settings")
        try await tap("profile", "profile", "save", ["theme": "dark"])
        try await tap("profile", "profile", "deleteAccount")
        try await tap("profile", "profile", "keep")
        try await tap("profile", "profile", "signOut")
        try await tap("profile", "profile", "confirm")
        return trees
    }
}
