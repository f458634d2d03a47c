import SwitchyardPlugin

/// The signed-in tabs (Stinsen README's AuthenticatedCoordinator): todos, projects, profile, each another plugin.
final class HomeCoordinator: TabsCoordinator {
    @Tab(target: .coordinator("navigation", in: "todos"), deepLink: "todos") var todos = makeTodos
    @Tab(target: .coordinator("projects", in: "projects"), deepLink: "projects") var projects = makeProjects
    @Tab(target: .coordinator("profile", in: "profile"), deepLink: "profile") var profile = makeProfile

    private(set) var retaps = 0

    init() {}

    func tabSelected(_ tab: String, isRepeat: Bool) {
        // Stinsen's onTapped(isRepeat): a re-tap is where an app scrolls to top or pops to root.
        if isRepeat { retaps += 1 }
    }
}

extension HomeCoordinator {
    func makeTodos() -> PluginCoordinator { PluginCoordinator() }
    func makeProjects() -> PluginCoordinator { PluginCoordinator() }
    func makeProfile() -> PluginCoordinator { PluginCoordinator() }
}
