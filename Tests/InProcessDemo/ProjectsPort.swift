import SwitchyardPlugin
import SwitchyardProtocol

// Plugins/node/projects.js, in Swift, for the in-process test tier (same route table, answers and log lines).

/// Stands for the Node plugin's store.
enum ProjectStore {
    static let projects: [String: (name: String, archived: Bool)] = [
        "p1": ("Apollo", false), "p2": ("Gemini", true), "p7": ("Voyager", false),
    ]
}

/// The projects tab: a list, and a project pushed as its own coordinator.
final class ProjectsCoordinator: StackCoordinator {
    @Root var list = makeList
    @Route(.push, deepLink: ":id", param: "id") var project = makeProject

    init() {}

    func makeList() -> Screen { Screen("ProjectList", ["count": .int(Int64(ProjectStore.projects.count))]) }

    func makeProject(_ id: String) throws -> ProjectCoordinator {
        guard ProjectStore.projects[id] != nil else { throw Rejection("there is no project '\(id)'") }
        return ProjectCoordinator(id: id)
    }
}

/// One project: an overview, its members pushed, its settings presented, its owner's profile (another plugin).
final class ProjectCoordinator: StackCoordinator, StatefulCoordinator, AppearanceObserving {
    nonisolated struct State: Codable, Sendable {
        var id = ""
    }

    @Root var overview = makeOverview
    @Route(.push, deepLink: "members", actions: [ActionDeclaration(name: "showOwner")]) var members = makeMembers
    @Route(
        .modal, deepLink: "settings", actions: [ActionDeclaration(name: "close")], also: [.fullScreen],
        options: PresentationOptions(detents: ["medium", "large"]))
    var settings = makeSettings
    @Route(.push, target: .coordinator("profile", in: "profile"), deepLink: "owner") var owner = makeOwner

    var state = State()

    init() {}

    convenience init(id: String) {
        self.init()
        state.id = id
    }

    func didCreate(_ context: CreationContext) {
        // Opened by another plugin (the todos' project links) with its params.
        if case .string(let id)? = context.params?["id"] { state.id = id }
    }

    func makeOverview() -> Screen {
        Screen(
            "Project", ["id": .string(state.id), "name": .string(ProjectStore.projects[state.id]?.name ?? state.id)])
    }

    func makeMembers() throws -> Screen {
        if ProjectStore.projects[state.id]?.archived == true { throw Rejection("project '\(state.id)' is archived") }
        return Screen("Members", ["project": .string(state.id)])
    }

    func makeSettings() -> Screen { Screen("ProjectSettings") }

    func makeOwner() -> PluginCoordinator { PluginCoordinator() }

    func appeared(entry: EntryID) { log("projects: entry \(entry.rawValue) appeared") }

    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        switch action.name {
        case "showOwner": [.route("owner")]
        case "close": [.dismiss]
        default: []
        }
    }
}

/// The in-process stand-in of the demo's `projects` plugin.
nonisolated let projectsPort = Plugin(
    "projects", version: "1.0.0", coordinators: [ProjectsCoordinator.self, ProjectCoordinator.self])
