import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

extension EventLog {
    /// The `deepLink/changed` notifications so far, in order.
    var linkChanges: [DeepLinkChangedNotification.Params] {
        all.compactMap { if case .deepLinkChanged(let change) = $0 { change } else { nil } }
    }

    /// Waits until the link `id` is in `state` (a notification said so) and returns that notification.
    func waitForLink(
        _ id: Int, _ state: DeepLinkChangedNotification.State
    ) async throws -> DeepLinkChangedNotification.Params {
        try await wait(for: "deep link \(id) \(state.rawValue)") { events in
            events.contains {
                if case .deepLinkChanged(let change) = $0 {
                    change.link.id == id && change.state == state
                } else {
                    false
                }
            }
        }
        return try #require(linkChanges.last { $0.link.id == id && $0.state == state })
    }
}

/// §13.5 through the real host and the demo's plugin processes: `switchyard://todos/todo/42` opened signed out waits for
/// the authenticated root and lands once the user signs in; a newer link replaces it, it times out, it is cancelled, it
/// turns out invalid after all, and a link that needs no waiting is applied at once as always. And a guard that
/// defers (Python and Node SDKs): its redirect is applied, the link waits for its condition.
@Suite("Deferred deep links through the real host", .heavy, .timeLimit(.minutes(2)))
struct DeferredLinkHostTests {
    static let todo42 = "switchyard://todos/todo/42"

    static func signIn(_ host: HostHandle) async throws -> UInt64 {
        try await host.navigate([.setRoot("authenticated", ["user": "alice"])]).revision
    }

    static func deferred(_ url: String, deferMs: Int? = nil) -> OpenRequest.Params {
        OpenRequest.Params(url: url, defer: true, deferMs: deferMs)
    }

    /// The todos stack's entries: route and params.
    static func todos(_ host: HostHandle) async -> [JSONValue?] {
        await host.snapshot().find("todos", "todos")?.entries?.map(\.params) ?? []
    }

    @Test("signed out, the link waits for the authenticated root; signing in lands on todo 42 in the next revision")
    func appliedAfterSignIn() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            let before = await host.snapshot()
            let main = try #require(before.root)
            let opened = try await host.open(Self.deferred(Self.todo42))
            let link = try #require(opened.deferred)
            #expect(link.until == .root("authenticated", instance: main) && link.deferMs == 300_000)
            #expect(opened.revision == before.revision && opened.instance == main, "nothing changed: sign-in shows")
            #expect(try await host.pendingDeepLink() == link)
            _ = try await events.waitForLink(link.id, .pending)

            let signedIn = try await Self.signIn(host)
            let applied = try await events.waitForLink(link.id, .applied)
            #expect(applied.revision == signedIn + 1, "its own revision, right after the sign-in's")
            #expect(await Self.todos(host) == [["id": "42"]])
            #expect(try await host.pendingDeepLink() == nil)
            #expect(events.linkChanges.map(\.state) == [.pending, .applied])
        }
    }

    @Test("a newer link replaces the one waiting and says so; only the newer one lands")
    func replaced() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            let first = try #require(try await host.open(Self.deferred(Self.todo42)).deferred)
            let second = try await host.open(Self.deferred("switchyard://todos/todo/7"))
            #expect(second.replaced == first)
            let replaced = try await events.waitForLink(first.id, .replaced)
            #expect(replaced.replacedBy == "switchyard://todos/todo/7")
            let newer = try #require(second.deferred)
            _ = try await Self.signIn(host)
            _ = try await events.waitForLink(newer.id, .applied)
            #expect(await Self.todos(host) == [["id": "7"]])
            #expect(!events.linkChanges.contains { $0.link.id == first.id && $0.state == .applied })
        }
    }

    @Test("a link that waits longer than deferMs times out; signing in later changes nothing more")
    func timedOut() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            let link = try #require(try await host.open(Self.deferred(Self.todo42, deferMs: 50)).deferred)
            #expect(link.deferMs == 50)
            _ = try await events.waitForLink(link.id, .timedOut)
            #expect(try await host.pendingDeepLink() == nil)
            let signedIn = try await Self.signIn(host)
            #expect(await host.snapshot().revision == signedIn)
            #expect(await Self.todos(host) == [])
        }
    }

    @Test("deepLink/cancel drops the link waiting (by id or whichever); signing in then lands nowhere")
    func cancelled() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            let link = try #require(try await host.open(Self.deferred(Self.todo42)).deferred)
            #expect(try await host.cancelDeepLink(id: link.id + 1) == nil, "another id: nothing cancelled")
            #expect(try await host.cancelDeepLink(id: link.id) == link)
            _ = try await events.waitForLink(link.id, .cancelled)
            #expect(try await host.cancelDeepLink() == nil)
            let signedIn = try await Self.signIn(host)
            #expect(await host.snapshot().revision == signedIn)
            #expect(await Self.todos(host) == [])
            #expect(events.linkChanges.map(\.state) == [.pending, .cancelled])
        }
    }

    @Test("a link the todos guard refuses once it can be tried is invalid after all, with the guard's error")
    func invalidAfterAll() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            let link = try #require(try await host.open(Self.deferred("switchyard://todos/todo/404")).deferred)
            let signedIn = try await Self.signIn(host)
            let invalid = try await events.waitForLink(link.id, .invalid)
            #expect(invalid.error?.code == .rejectedByGuard && invalid.error?.data?["route"] == "todo")
            #expect(await host.snapshot().revision == signedIn, "a failed chain changes nothing")
            #expect(try await host.pendingDeepLink() == nil)
        }
    }

    @Test("a link that needs no waiting is applied at once, as without defer; one invalid through every root fails")
    func appliedAtOnce() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            let signedIn = try await Self.signIn(host)
            let opened = try await host.open(Self.deferred(Self.todo42))
            #expect(opened.deferred == nil && opened.replaced == nil && opened.revision == signedIn + 1)
            #expect(await Self.todos(host) == [["id": "42"]])
            do throws(ResponseError) {
                _ = try await host.open(Self.deferred("switchyard://todos/nowhere"))
                Issue.record("an invalid link was accepted")
            } catch {
                #expect(error.code == .deepLinkInvalid && error.data?["segment"] == "nowhere")
            }
            #expect(events.linkChanges.isEmpty)
            #expect(try await host.pendingDeepLink() == nil)
        }
    }

    @Test("without defer a link applied at once replaces the one waiting; without defer a link that cannot wait fails")
    func openWithoutDefer() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            let events = EventLog(host)
            do throws(ResponseError) {
                _ = try await host.open(Self.todo42)
                Issue.record("a signed-out link was applied")
            } catch {
                #expect(error.code == .deepLinkInvalid && error.data?["segment"] == "todos")
            }
            let link = try #require(try await host.open(Self.deferred(Self.todo42)).deferred)
            _ = try await host.open("switchyard://forgot")
            let replaced = try await events.waitForLink(link.id, .replaced)
            #expect(replaced.replacedBy == "switchyard://forgot")
            #expect(try await host.pendingDeepLink() == nil)
        }
    }

    @Test(
        "a guard that defers (Python and Node SDKs): the redirect it asks for shows, the link waits for its condition and lands once it holds",
        arguments: ["python", "node"])
    func guardDefers(_ language: String) async throws {
        let club = PluginManifest(
            name: "club",
            command: [
                language == "python" ? TestPlugins.python : TestPlugins.node,
                "\(packageRoot)/Tests/Fixtures/plugins/club.\(language == "python" ? "py" : "js")",
            ])
        try await withHost([club], root: CoordinatorReference(plugin: "club", type: "club")) { host in
            let events = EventLog(host)
            let club = try #require(await host.snapshot().root)
            // Without defer the guard's "not yet" is a refusal like any other, its deferral in data.
            do throws(ResponseError) {
                _ = try await host.open("switchyard://offer/7")
                Issue.record("a guest got the offer")
            } catch {
                #expect(error.code == .rejectedByGuard && error.data?["defer"]?["until"] == ["root": "member"])
            }
            let opened = try await host.open(Self.deferred("switchyard://offer/7"))
            let link = try #require(opened.deferred)
            #expect(link.until == .root("member", instance: club), "the condition is about the refused coordinator")
            #expect(opened.revision == 2 && opened.redirectError == nil)
            #expect(await host.snapshot().instance(club)?.entries?.map(\.route) == ["join"], "the redirect shows")
            let member = try await host.navigate([.setRoot("member")]).revision
            let applied = try await events.waitForLink(link.id, .applied)
            #expect(applied.revision == member + 1)
            let shown = await host.snapshot().instance(club)
            #expect(shown?.root?.route == "member" && shown?.entries?.map(\.route) == ["offer"])
            #expect(shown?.entries?.first?.params == ["id": 7])
        }
    }
}
