import SwitchyardPlugin

Plugin("main", version: "1.0.0", coordinators: [MainCoordinator.self]).run()
