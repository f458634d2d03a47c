import SwitchyardPlugin

// One build plays the releases an upgrade replaces it with (Releases.swift): `--release`, `--with-history`, ….
Plugin(
    "todos", version: TodosRelease.version,
    coordinators: [NavigationCoordinator.self, TodosCoordinator.self, ShareCoordinator.self]
).run()
