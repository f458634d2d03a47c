import SwitchyardPlugin

Plugin(
    "todos", version: "1.0.0", coordinators: [NavigationCoordinator.self, TodosCoordinator.self, ShareCoordinator.self]
).run()
