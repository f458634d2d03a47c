@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

extension App {
    /// The demo's shape: the unauthenticated and the authenticated roots both pass through (`""`), so a link
    /// follows whichever is active (the harness's own tables give the unauthenticated root a `login` pattern).
    static func withPassThroughRoots() throws -> App {
        var app = try App()
        let tables = App.tables.map { table in
            (
                plugin: table.plugin,
                coordinators: table.coordinators.map { declaration in
                    var declaration = declaration
                    for index in declaration.routes.indices where declaration.routes[index].name == "unauthenticated" {
                        declaration.routes[index].deepLink = ""
                    }
                    return declaration
                }
            )
        }
        app.registry = RouteRegistry(tables: tables)
        return app
    }

    /// The dry run of a link opened with `defer`.
    func resolveDeferrable(_ url: String) throws(ResponseError) -> DeepLinkPlan {
        let resolver = DeepLinkResolver(
            link: try DeepLinkURL(parsing: url), tree: tree, registry: registry, deferrable: true)
        while true {
            switch resolver.advance() {
            case .resolved(let plan): return plan
            case .invalid(let error): throw error
            case .needs: resolver.resume(with: .failure(ResponseError(.deepLinkInvalid, "no handler")))
            }
        }
    }
}

/// §13.5 without processes: the dry run that may defer (a root that is not active, a tab not shown yet), the
/// condition checked on trees, and the pending link as a value (``DeferredLinks``).
@Suite("Deferred deep links: the dry run and the pending link", .timeLimit(.minutes(1)))
struct DeferredLinkTests {
    @Test("a link that leads through a root that is not active waits for it; the link never sets it")
    func waitsForRoot() throws {
        let app = try App.withPassThroughRoots()
        let main = try #require(app.tree.rootID)
        #expect(throws: ResponseError.self) { try app.resolve("switchyard://todos/todo/42") }
        let plan = try app.resolveDeferrable("switchyard://todos/todo/42")
        #expect(plan.until == .root("authenticated", instance: main))
        #expect(!plan.steps.contains { $0.op == .setRoot }, "\(plan.steps)")
        #expect(plan.until?.state(in: app.tree) == .waits)
    }

    @Test("a link valid now resolves as it does without defer; one invalid through every root fails as it does")
    func sameAsWithoutDefer() throws {
        var app = try App.withPassThroughRoots()
        try app.logIn()
        for url in ["switchyard://todos/todo/42", "switchyard://about", "switchyard://projects/p1/members"] {
            let plain = try app.resolve(url)
            let deferrable = try app.resolveDeferrable(url)
            #expect(deferrable.until == nil && deferrable.steps == plain.steps && deferrable.links == plain.links)
        }
        var plainError: ResponseError?
        do { _ = try app.resolve("switchyard://todos/nowhere") } catch { plainError = error }
        let expected = try #require(plainError)
        #expect(throws: expected) { try app.resolveDeferrable("switchyard://todos/nowhere") }
    }

    @Test("a tab its owner does not show yet (§12.7) is waited for; once shown the link resolves")
    func waitsForTab() throws {
        var app = try App.withPassThroughRoots()
        try app.logIn()
        let home = app.id("authenticated", "home")
        try app.run([.setTabs(["todos", "profile"])], from: home)
        let plan = try app.resolveDeferrable("switchyard://projects/p1")
        #expect(plan.until == .tab("projects", instance: home))
        try app.run([.setTabs(["todos", "profile", "projects"])], from: home)
        #expect(plan.until?.state(in: app.tree) == .holds)
        #expect(try app.resolveDeferrable("switchyard://projects/p1").until == nil)
    }

    @Test("a condition holds, waits, or can no longer hold when its coordinator left; by type, any instance counts")
    func conditionStates() throws {
        var app = try App()
        let main = try #require(app.tree.rootID)
        let byType = DeferCondition.root("authenticated", plugin: "main", type: "main")
        #expect(DeferCondition.root("authenticated", instance: main).state(in: app.tree) == .waits)
        #expect(byType.state(in: app.tree) == .waits)
        #expect(DeferCondition.root("x", instance: InstanceID(999)).state(in: app.tree) == .gone)
        #expect(DeferCondition.root("x").state(in: app.tree) == .gone, "names no coordinator")
        try app.logIn()
        #expect(byType.state(in: app.tree) == .holds)
        #expect(DeferCondition.tab("projects", plugin: "authenticated", type: "home").state(in: app.tree) == .holds)
    }

    // MARK: - The pending link as a value

    static let signIn = DeferCondition.root("authenticated", plugin: "main", type: "main")

    @Test("a newer link replaces the one waiting, and says so; a link applied at once does too")
    func replacement() {
        var links = DeferredLinks()
        let first = links.add(url: "a", until: Self.signIn, deferMs: 1_000, now: 0)
        #expect(first.replaced == nil && first.notifications.map(\.state) == [.pending])
        let second = links.add(url: "b", until: Self.signIn, deferMs: 1_000, now: 5)
        #expect(second.replaced == first.link)
        #expect(second.notifications.map(\.state) == [.replaced, .pending])
        #expect(second.notifications.first?.replacedBy == "b" && links.pending == second.link)
        #expect(second.link.id != first.link.id)
        let applied = links.supersede(by: "c")
        #expect(applied.link == second.link && applied.notifications.first?.state == .replaced && links.pending == nil)
        #expect(links.supersede(by: "d").notifications.isEmpty)
    }

    @Test("tried once its condition holds; applied, or invalid after all; a link being tried is not pending")
    func tries() throws {
        var app = try App()
        var links = DeferredLinks()
        let link = links.add(url: "a", until: Self.signIn, deferMs: 1_000, now: 0).link
        #expect(links.linkToTry(in: app.tree) == nil, "the condition does not hold yet")
        try app.logIn()
        #expect(links.linkToTry(in: app.tree) == link)
        #expect(links.pending == nil && !links.watchesTree)
        #expect(links.cancel(id: nil).cancelled == nil, "too late: it is being applied")
        let applied = links.tried(
            link.id, outcome: .applied(revision: 3, instance: InstanceID(9)), tree: app.tree, now: 1)
        #expect(applied.map(\.state) == [.applied] && applied.first?.revision == 3)

        let other = links.add(url: "b", until: .root("authenticated", instance: app.tree.rootID), deferMs: 10, now: 2)
        #expect(links.linkToTry(in: app.tree) == other.link)
        let failed = links.tried(
            other.link.id, outcome: .failed(ResponseError(.rejectedByGuard, "no")), tree: app.tree, now: 3)
        #expect(failed.map(\.state) == [.invalid] && failed.first?.error?.code == .rejectedByGuard)
        #expect(
            links.tried(other.link.id, outcome: .applied(revision: 1, instance: InstanceID(1)), tree: app.tree, now: 4)
                .isEmpty)
    }

    @Test("deferred again it waits again; unless the new condition holds, its time ran out, or a newer link waits")
    func deferredAgain() throws {
        var app = try App()
        try app.logIn()
        let later = DeferCondition.tab("inbox", plugin: "authenticated", type: "home")
        var links = DeferredLinks()
        var link = links.add(url: "a", until: Self.signIn, deferMs: 100, now: 0).link
        _ = links.linkToTry(in: app.tree)
        #expect(links.tried(link.id, outcome: .deferred(later), tree: app.tree, now: 10).map(\.state) == [.pending])
        #expect(links.pending?.until == later && links.nextDeadline == 100)

        link = links.add(url: "b", until: Self.signIn, deferMs: 100, now: 20).link
        _ = links.linkToTry(in: app.tree)
        let holding = links.tried(link.id, outcome: .deferred(Self.signIn), tree: app.tree, now: 30)
        #expect(holding.map(\.state) == [.invalid], "deferred until what holds already: it would be tried forever")

        link = links.add(url: "c", until: Self.signIn, deferMs: 100, now: 40).link
        _ = links.linkToTry(in: app.tree)
        #expect(links.tried(link.id, outcome: .deferred(later), tree: app.tree, now: 140).map(\.state) == [.timedOut])

        link = links.add(url: "d", until: Self.signIn, deferMs: 100, now: 200).link
        _ = links.linkToTry(in: app.tree)
        let newer = links.add(url: "e", until: later, deferMs: 100, now: 210)
        #expect(newer.replaced == nil, "the link being tried is not pending")
        let replaced = links.tried(link.id, outcome: .deferred(later), tree: app.tree, now: 220)
        #expect(replaced.map(\.state) == [.replaced] && replaced.first?.replacedBy == "e")
        #expect(links.pending == newer.link)
    }

    @Test("cancelled by id or whichever waits; timed out at its deadline, not before")
    func cancelAndExpire() {
        var links = DeferredLinks()
        let link = links.add(url: "a", until: Self.signIn, deferMs: 100, now: 1_000).link
        #expect(links.cancel(id: link.id + 1).cancelled == nil && links.pending == link)
        #expect(links.expire(now: 1_099).isEmpty && links.nextDeadline == 1_100)
        #expect(links.expire(now: 1_100).map(\.state) == [.timedOut] && links.pending == nil)
        let again = links.add(url: "b", until: Self.signIn, deferMs: 100, now: 2_000).link
        let cancelled = links.cancel(id: again.id)
        #expect(cancelled.cancelled == again && cancelled.notifications.map(\.state) == [.cancelled])
        #expect(links.pending == nil && links.nextDeadline == nil && links.expire(now: 9_999).isEmpty)
    }
}
