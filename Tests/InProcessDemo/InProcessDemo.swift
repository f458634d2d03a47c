import DemoAuthenticatedPlugin
import DemoMainPlugin
import DemoTodosPlugin
public import SwitchyardPlugin

/// The demo app's six plugins as Swift `Plugin` values, by manifest name, for the in-process test tier: the three
/// Swift plugins' own libraries, and Swift stand-ins of the Python and Node ones (DemoPortTests holds each stand-in to
/// its plugin's committed route contract).
public enum InProcessDemo {
    /// The plugins, by the demo manifest's names.
    nonisolated public static let plugins: [String: Plugin] = [
        "main": mainPlugin, "authenticated": authenticatedPlugin, "todos": todosPlugin,
        "unauthenticated": unauthenticatedPort, "profile": profilePort, "projects": projectsPort,
    ]
}
