import SwitchyardChaos
import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// The victim as the misbehaving plugin declares it (`--type profile --sample-actions`), and its stacks as the host
/// publishes them.
enum ModelFixture {
    /// A stack opened while its plugin was down: no root until the host fills it.
    static func placeholder(instance: Int64) -> InstanceSnapshot {
        var placeholder = stack([], instance: instance)
        placeholder.root = nil
        placeholder.status = .unavailable
        return placeholder
    }

    static let declaration: JSONValue = [
        "type": "profile", "kind": "stack", "initialRoute": "bench",
        "routes": [
            ["name": "bench", "transition": "root"],
            [
                "name": "sample", "transition": "push", "deepLink": "sample/:id",
                "params": [["name": "id", "type": "string"]], "actions": [["name": "close"]],
            ],
        ],
    ]

    static func model() throws -> VictimModel {
        let coordinators = try Coding.decode([CoordinatorDeclaration].self, from: [declaration])
        return VictimModel(
            plugin: "profile", type: "profile", registry: RouteRegistry(tables: [("profile", coordinators)]))
    }

    /// The victim's instance with the `sample` screens `ids` pushed on its root (the props as given, else the id).
    static func stack(_ ids: [String], props: [String]? = nil, instance: Int64 = 9) -> InstanceSnapshot {
        let root = EntrySnapshot(
            entry: EntryID(100), route: "bench", transition: .root,
            content: .screen(ScreenDescriptor(name: "Bench", props: [:])))
        let entries = ids.enumerated().map { index, id in
            EntrySnapshot(
                entry: EntryID(Int64(101 + index)), route: "sample", transition: .push, params: ["id": .string(id)],
                content: .screen(ScreenDescriptor(name: "sample", props: ["id": .string(props?[index] ?? id)])))
        }
        return InstanceSnapshot(
            id: InstanceID(instance), plugin: "profile", type: "profile", kind: .stack, root: root, entries: entries)
    }
}

/// The model checker on hand-written histories: acknowledged operations folded through the navigation core.
@Suite("Chaos model checker", .timeLimit(.minutes(1)))
struct ModelCheckerTests {
    typealias C = CheckerTests

    static func push(_ op: Int, _ id: String, at time: Double) -> HistoryEvent {
        C.invoke(op, client: 0, f: "push", value: ["route": "sample", "params": ["id": .string(id)]], at: time)
    }

    /// Two pushes, a no-op answered at the same revision, a dismissal of the first entry, an action on the last.
    static let correct: [HistoryEvent] = [
        C.tree(1, ModelFixture.stack([]), at: 0),
        push(1, "4", at: 1), C.tree(2, ModelFixture.stack(["4"]), at: 2),
        C.ok(1, client: 0, f: "push", revision: 2, at: 2),
        push(2, "8", at: 3), C.tree(3, ModelFixture.stack(["4", "8"]), at: 4),
        C.ok(2, client: 0, f: "push", revision: 3, at: 4),
        C.invoke(3, client: 1, f: "link", at: 4.5), C.tree(4, ModelFixture.stack(["4", "8"]), at: 5),
        C.ok(3, client: 1, f: "link", revision: 4, at: 5),
        C.invoke(4, client: 0, f: "push", value: ["route": "sample", "params": ["id": "5"]], at: 6),
        .operation(.fail, time: 7, op: 4, client: 0, f: "push", error: "pluginUnavailable: down"),
        C.invoke(5, client: 0, f: "action", value: ["index": 1], at: 8), C.tree(5, ModelFixture.stack(["4"]), at: 9),
        C.ok(5, client: 0, f: "action", revision: 5, at: 9),
        C.invoke(6, client: 0, f: "dismiss", value: ["index": 0], at: 10), C.tree(6, ModelFixture.stack([]), at: 11),
        C.ok(6, client: 0, f: "dismiss", revision: 6, at: 11),
        C.invoke(7, client: 0, f: "popToRoot", at: 12), C.ok(7, client: 0, f: "popToRoot", revision: 6, at: 12),
    ]

    @Test("a history the host got right agrees with the model after every acknowledged operation")
    func agrees() throws {
        let result = try ModelFixture.model().check(History(Self.correct))
        #expect(result.passed, "\(result.violations)")
        #expect(result.summary.hasPrefix("5 acknowledged operations"))
    }

    @Test("a wrong screen (the seeded defect's '-wrong' id) is caught at the operation that made it")
    func wrongAnswer() throws {
        var events = Self.correct
        let index = try #require(events.firstIndex { $0.type == .tree && $0.revision == 3 })
        events[index].instance = ModelFixture.stack(["4", "8"], props: ["4", "8-wrong"])
        let result = try ModelFixture.model().check(History(events))
        #expect(result.violations.count == 1)
        let violation = try #require(result.violations.first)
        #expect(violation.contains("op 2 (push"), "\(violation)")
        #expect(violation.contains("8-wrong"), "\(violation)")
    }

    @Test("a change the host lost (published stack unchanged though acknowledged) is a violation")
    func lostChange() throws {
        var events = Self.correct
        let index = try #require(events.firstIndex { $0.type == .tree && $0.revision == 2 })
        events[index].instance = ModelFixture.stack([])
        #expect(try ModelFixture.model().check(History(events)).violations.first?.contains("op 1 (push") == true)
    }

    @Test("a sign-out starts a fresh stack; a placeholder (the victim down) is accepted until the host fills it")
    func signOut() throws {
        let placeholder = ModelFixture.placeholder(instance: 20)
        let events: [HistoryEvent] = [
            C.tree(1, ModelFixture.stack(["1"]), at: 0),
            C.invoke(1, client: 0, f: "signOut", at: 1), C.tree(2, placeholder, at: 2),
            C.ok(1, client: 0, f: "signOut", revision: 2, at: 2),
            C.tree(3, ModelFixture.stack([], instance: 20), at: 3),
            Self.push(2, "6", at: 4), C.tree(4, ModelFixture.stack(["6"], instance: 20), at: 5),
            C.ok(2, client: 0, f: "push", revision: 4, at: 5),
            C.invoke(3, client: 0, f: "signOut", at: 6), C.tree(5, ModelFixture.stack([], instance: 30), at: 7),
            C.ok(3, client: 0, f: "signOut", revision: 5, at: 7),
        ]
        let result = try ModelFixture.model().check(History(events))
        #expect(result.passed, "\(result.violations)")
    }

    @Test("the host's fill of a placeholder recorded after the next operation's invoke (a lagging event stream)")
    func fillRecordedLate() throws {
        let placeholder = ModelFixture.placeholder(instance: 20)
        let events: [HistoryEvent] = [
            C.tree(1, ModelFixture.stack(["1"]), at: 0),
            C.invoke(1, client: 0, f: "signOut", at: 1), C.tree(2, placeholder, at: 2),
            C.ok(1, client: 0, f: "signOut", revision: 2, at: 2),
            // The host filled the stack (revision 3) before the push ran, but the history saw it after the invoke.
            Self.push(2, "6", at: 3), C.tree(3, ModelFixture.stack([], instance: 20), at: 4),
            C.tree(4, ModelFixture.stack(["6"], instance: 20), at: 5),
            C.ok(2, client: 0, f: "push", revision: 4, at: 5),
        ]
        let result = try ModelFixture.model().check(History(events))
        #expect(result.passed, "\(result.violations)")
        #expect(result.summary.hasPrefix("2 acknowledged operations"), "\(result.summary)")
    }

    @Test(
        "a sign-out's placeholder, then a failed push while the stream still lags: the model starts again from the host's fill, never from the stack before the sign-out"
    )
    func staleLatestAfterSignOut() throws {
        let placeholder = ModelFixture.placeholder(instance: 20)
        let events: [HistoryEvent] = [
            C.tree(1, ModelFixture.stack(["1"]), at: 0),
            C.invoke(1, client: 0, f: "signOut", at: 1), C.ok(1, client: 0, f: "signOut", revision: 3, at: 2),
            // Refused while the new stack is a placeholder: it changed nothing, and must not make the model adopt
            // the stack before the sign-out, which is still the newest the lagging history holds.
            Self.push(2, "7", at: 3),
            .operation(.fail, time: 4, op: 2, client: 0, f: "push", error: "pluginUnavailable: a placeholder"),
            Self.push(3, "8", at: 5),
            // The host's revisions 2 to 5, recorded only now.
            C.tree(2, ModelFixture.stack([], instance: 20), at: 6), C.tree(3, placeholder, at: 6),
            C.tree(4, ModelFixture.stack([], instance: 20), at: 6),
            C.tree(5, ModelFixture.stack(["8"], instance: 20), at: 6),
            C.ok(3, client: 0, f: "push", revision: 5, at: 6),
        ]
        let result = try ModelFixture.model().check(History(events))
        #expect(result.passed, "\(result.violations)")
        #expect(result.summary.hasPrefix("2 acknowledged operations"), "\(result.summary)")
    }

    @Test("an operation without an answer makes the rest indeterminate, not a violation")
    func indeterminate() throws {
        let events: [HistoryEvent] = [
            C.tree(1, ModelFixture.stack([]), at: 0), Self.push(1, "3", at: 1),
            .operation(.info, time: 30_001, op: 1, client: 0, f: "push", error: "no answer"),
        ]
        let result = try ModelFixture.model().check(History(events))
        #expect(result.passed)
        #expect(result.summary.contains("indeterminate from op 1"))
    }
}
