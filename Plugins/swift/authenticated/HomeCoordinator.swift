import SwitchyardPlugin

/// The signed-in tabs (Stinsen README's AuthenticatedCoordinator): todos, projects, profile, each another plugin.
final class HomeCoordinator: TabsCoordinator {
    @Tab(
        target: .coordinator("navigation", in: "todos"), deepLink: "todos",
        tabItem: TabItem("Todos", symbol: "checklist"))
    var todos = makeTodos
    @Tab(
        target: .coordinator("projects", in: "projects"), deepLink: "projects",
        tabItem: TabItem("Projects", symbol: "folder"))
    var projects = makeProjects
    @Tab(
        target: .coordinator("profile", in: "profile"), deepLink: "profile",
        tabItem: TabItem("Profile", symbol: "person.crop.circle"))
    var profile = makeProfile
    /// Not shown at sign-in: the app adds it at run time with `setTabs` (SUICoordinator's `setPages`). A link to it
    /// opened with defer waits until it is shown (Protocol/README.md §13.5).
    @Tab(deepLink: "inbox", tabItem: TabItem("Inbox", symbol: "tray")) var inbox = makeInbox

    private(set) var retaps = 0

    init() {}

    func initialTabs() -> [String]? { [tab(\.todos), tab(\.projects), tab(\.profile)] }

    func tabSelected(_ tab: String, isRepeat: Bool) {
        // Stinsen's onTapped(isRepeat): a re-tap is where an app scrolls to top or pops to root.
        if isRepeat { retaps += 1 }
    }
}

extension HomeCoordinator {
    func makeTodos() -> PluginCoordinator { PluginCoordinator() }
    func makeProjects() -> PluginCoordinator { PluginCoordinator() }
    func makeProfile() -> PluginCoordinator { PluginCoordinator() }
    func makeInbox() -> Screen { Screen("Inbox") }
}
