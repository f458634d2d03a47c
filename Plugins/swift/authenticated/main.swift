import SwitchyardPlugin

Plugin("authenticated", version: "1.0.0", coordinators: [HomeCoordinator.self]).run()
