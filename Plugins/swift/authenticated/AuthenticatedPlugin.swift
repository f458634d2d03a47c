public import SwitchyardPlugin

/// The demo's signed-in tabs plugin: what its executable serves on stdio, and what the in-process test tier runs.
nonisolated public let authenticatedPlugin = Plugin(
    "authenticated", version: "1.0.0", coordinators: [HomeCoordinator.self])
