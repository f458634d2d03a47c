public import SwitchyardPlugin

/// The demo's todos plugin: what its executable serves on stdio, and what the in-process test tier runs. One build
/// plays the releases an upgrade replaces it with (Releases.swift): `--release`, `--with-history`, ….
nonisolated public let todosPlugin = Plugin(
    "todos", version: TodosRelease.version,
    coordinators: [NavigationCoordinator.self, TodosCoordinator.self, ShareCoordinator.self])
