public import SwitchyardPlugin

/// The demo's main plugin: what its executable serves on stdio, and what the in-process test tier runs in a test.
nonisolated public let mainPlugin = Plugin("main", version: "1.0.0", coordinators: [MainCoordinator.self])
