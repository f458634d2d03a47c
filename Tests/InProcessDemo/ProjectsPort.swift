import SwitchyardPlugin
import SwitchyardProtocol

// Plugins/node/projects.js, in Swift, for the in-process test tier (same route table, answers and log lines).

/// Stands for the Node plugin's store (in its order: the list shows them so).
enum ProjectStore {
    struct Project {
        let id: String
        let name: String
        var archived = false
        let members: [String]
    }

    static let all = [
        Project(id: "p1", name: "Apollo", members: ["Ada Lovelace", "Grace Hopper", "Margaret Hamilton"]),
        Project(id: "p2", name: "Gemini", archived: true, members: ["Gus Grissom"]),
        Project(id: "p7", name: "Voyager", members: ["Carl Sagan", "Linda Morabito"]),
    ]

    static func find(_ id: String) -> Project? { all.first { $0.id == id } }
}

/// The projects tab: a list, and a project pushed as its own coordinator.
final class ProjectsCoordinator: StackCoordinator {
    @Root(actions: [ActionDeclaration(name: "open", params: [ParamDeclaration(name: "id", type: .string)])])
    var list = makeList
    @Route(.push, deepLink: ":id", param: "id") var project = makeProject

    init() {}

    func makeList() -> Screen {
        Screen("ProjectList", title: "Projects", ["count": .int(Int64(ProjectStore.all.count))]) {
            List {
                ForEach(ProjectStore.all) { project in
                    Row(project.name, detail: project.archived ? "archived" : "\(project.members.count) members")
                        .symbol("folder").action("open", ["id": project.id])
                }
            }
        }
    }

    func makeProject(_ id: String) throws -> ProjectCoordinator {
        guard ProjectStore.find(id) != nil else { throw Rejection("there is no project '\(id)'") }
        return ProjectCoordinator(id: id)
    }

    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        guard action.name == "open", let id = action.params?["id"]?.stringValue else { return [] }
        return [.route("project", ["id": .string(id)])]
    }
}

/// One project: an overview, its members pushed, its settings presented, its owner's profile (another plugin).
final class ProjectCoordinator: StackCoordinator, StatefulCoordinator, AppearanceObserving {
    nonisolated struct State: Codable, Sendable {
        var id = ""
    }

    @Root(actions: ["members", "settings"]) var overview = makeOverview
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
        let project = ProjectStore.find(state.id)
        let name = project?.name ?? state.id
        // A title fits a navigation bar; the props keep the whole name.
        let shown = name.count > 60 ? "\(name.prefix(59))…" : name
        return Screen("Project", title: shown, ["id": .string(state.id), "name": .string(name)]) {
            Text(shown).font(.title)
            Text(project?.archived == true ? "Archived" : "Active").font(.caption)
            List {
                Section {
                    if let project {
                        Row("Members").badge("\(project.members.count)").symbol("person.2").action("members")
                    } else {
                        Row("Members").symbol("person.2").action("members")
                    }
                    Row("Settings").symbol("gearshape").action("settings")
                }
            }
        }
    }

    func makeMembers() throws -> Screen {
        let project = ProjectStore.find(state.id)
        if project?.archived == true { throw Rejection("project '\(state.id)' is archived") }
        return Screen("Members", title: "Members", ["project": .string(state.id)]) {
            List {
                Section(project?.name ?? state.id) {
                    ForEach(project?.members ?? []) { Row($0).symbol("person.crop.circle") }
                }
            }
            Button("Owner", symbol: "person.crop.circle", action: "showOwner")
        }
    }

    func makeSettings() -> Screen {
        Screen("ProjectSettings", title: "Project settings") {
            Toggle("Notifications", id: "notify", isOn: true)
            Button("Close", style: .primary, action: "close")
        }
    }

    func makeOwner() -> PluginCoordinator { PluginCoordinator() }

    func appeared(entry: EntryID) { log("projects: entry \(entry.rawValue) appeared") }

    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        switch action.name {
        case "members": [.route("members")]
        case "settings": [.route("settings")]
        case "showOwner": [.route("owner")]
        case "close": [.dismiss]
        default: []
        }
    }
}

/// The in-process stand-in of the demo's `projects` plugin.
nonisolated let projectsPort = Plugin(
    "projects", version: "1.0.0", coordinators: [ProjectsCoordinator.self, ProjectCoordinator.self])
