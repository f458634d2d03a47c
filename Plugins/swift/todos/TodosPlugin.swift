public import SwitchyardPlugin

/// The demo's todos plugin: what its executable serves on stdio, and what the in-process test tier runs.
nonisolated public let todosPlugin = Plugin(
    "todos", version: "1.0.0", coordinators: [NavigationCoordinator.self, TodosCoordinator.self, ShareCoordinator.self])
