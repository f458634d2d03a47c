import SwitchyardProtocol

/// A plugin: its name and coordinator types. `Plugin(...).run()` serves the host on stdio.
///
/// ```swift
/// Plugin("todos", version: "1.0.0", coordinators: [TodosCoordinator.self]).run()
/// ```
public struct Plugin: Sendable {
    /// The name reported in `initialize`. The host addresses the plugin by its manifest's name; keeping the two the
    /// same keeps logs and errors unambiguous.
    public let name: String
    /// The version reported in `initialize` and shown by `switchyard status`.
    public let version: String
    private let makeTypes: @MainActor @Sendable () -> [any Coordinatable.Type]

    /// Names the plugin and lists every coordinator type it serves, child types included: a type missing from the
    /// list cannot be created, even as another type's child. The list is read on the main actor when the plugin
    /// starts, so declaring a `Plugin` (as a global, say) costs nothing.
    public init(
        _ name: String, version: String = "1.0.0",
        coordinators: @autoclosure @escaping @MainActor @Sendable () -> [any Coordinatable.Type]
    ) {
        self.name = name
        self.version = version
        self.makeTypes = coordinators
    }

    /// Takes over stdio and serves the host until stdin closes. Never returns.
    public func run() -> Never {
        PluginRuntime.run { [self] in
            let server = makeServer()
            // At once, for whoever runs the plugin by hand; the host gets them as the answer to `initialize`.
            for problem in server.core.declarationProblems { StdioGuard.writeError("switchyard: error: \(problem)\n") }
            return server.runtime
        }
    }

    /// A core served by a runtime without stdio: what ``run()`` serves, and what `PluginTestConnection` drives
    /// in-process. The runtime keeps the core alive.
    @_spi(Testing)
    @MainActor
    public func makeServer() -> (core: PluginCore, runtime: PluginRuntime) {
        let core = makeCore()
        let runtime = PluginRuntime(
            configuration: .init(info: PluginInfo(name: name, version: version), coordinators: []))
        core.attach(to: runtime)
        return (core, runtime)
    }

    /// The plugin's core alone, without a runtime: its protocol handlers called directly (tests of plugin logic now
    /// prefer `PluginTestConnection`, which goes through the protocol as the host does).
    @MainActor
    public func makeCore() -> PluginCore {
        PluginCore(name: name, version: version, coordinators: makeTypes())
    }
}
