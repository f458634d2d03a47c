import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardHostTestSupport
import SwitchyardTestSupport
import Testing

@Suite("Async control client against a real host", .heavy, .timeLimit(.minutes(1)))
struct AsyncControlClientTests {
    /// Runs `body` with a client of a fresh in-process demo host.
    func withDemoHost(_ body: @Sendable (AsyncControlClient) async throws -> Void) async throws {
        try await withControlHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { _, client in try await body(client)
        }
    }

    @Test("calls in flight at once each get their own answer; notifications stream; close fails what is left")
    func concurrentCalls() async throws {
        try await withDemoHost { client in
            let subscribed = try await client.call(TreeSubscribeRequest.self, .init(snapshots: false))
            #expect(subscribed.revision == 1)
            async let pings = withThrowingTaskGroup(of: JSONValue.self) { group in
                for _ in 0..<20 { group.addTask { try await client.call("$/ping") } }
                return try await group.reduce(into: 0) { count, _ in count += 1 }
            }
            let login = try await client.call(
                NavigateRequest.self, .init(steps: [.setRoot("authenticated", ["user": "alice"])]))
            #expect(login.revision == 2)
            #expect(try await pings == 20)
            if case .failure(let error) = try await client.response("no/such/method") {
                #expect(error.code == .methodNotFound)
            } else {
                Issue.record("an unknown method succeeded")
            }
            var iterator = client.notifications.makeAsyncIterator()
            var revision: JSONValue?
            while let message = await iterator.next() {
                if case .notification("tree/changed", let params) = message {
                    revision = params?["revision"]
                    break
                }
            }
            #expect(revision == .int(2))
            client.close()
            await #expect(throws: AsyncControlClient.Failure.self) { try await client.call("$/ping") }
        }
    }

    @Test("every control method, typed: validate, open, tree, query, user/dismissed, status, render, unsubscribe")
    func typedMethods() async throws {
        try await withDemoHost { client in
            defer { client.close() }
            _ = try await client.call(TreeSubscribeRequest.self, .init(snapshots: true))

            let valid = try await client.call(ValidateRequest.self, .init(url: "switchyard://forgot?email=a@b.c"))
            #expect(valid.valid && valid.steps?.last?.route == "forgotPassword")
            let invalid = try await client.call(ValidateRequest.self, .init(url: "switchyard://todos/todo/42"))
            #expect(!invalid.valid && invalid.error?.code == .deepLinkInvalid)

            let opened = try await client.call(OpenRequest.self, .init(url: "switchyard://forgot?email=a@b.c"))
            #expect(opened.revision == 2)
            await #expect {
                try await client.call(OpenRequest.self, .init(url: "switchyard://todos/todo/42"))
            } throws: { error in
                guard case .response(let response) = error as? AsyncControlClient.Failure else { return false }
                return response.code == .deepLinkInvalid && response.data?["segment"] == "todos"
            }

            _ = try await client.call(
                NavigateRequest.self, .init(steps: [.setRoot("authenticated", ["user": "alice"])]))
            _ = try await client.call(OpenRequest.self, .init(url: "switchyard://todos/todo/42"))
            let tree = try await client.call(TreeGetRequest.self, Empty())
            let todos = try #require(tree.find("todos", "todos"))
            let entry = try #require(todos.entries?.last)
            #expect(entry.route == "todo")
            let top = try await client.call(TreeQueryRequest.self, .init(query: .currentRoute, instance: todos.id))
            #expect(top.result == "todo")
            let dismissed = try await client.call(
                UserDismissedRequest.self, .init(instance: todos.id, entry: entry.entry))
            #expect(dismissed.revision == 5)

            let status = try await client.call(HostStatusRequest.self, Empty())
            #expect(status.revision == 5)
            #expect(
                Set(status.plugins.map(\.name)) == [
                    "main", "unauthenticated", "authenticated", "todos", "projects", "profile",
                ])
            #expect(status.plugins.allSatisfy { $0.state == "ready" && ($0.pid ?? 0) > 0 })
            let rendered = try await client.call(TreeRenderRequest.self, .init(format: .mermaid))
            #expect(rendered.revision == 5 && rendered.text.hasPrefix("flowchart"))

            // Every change so far reached the subscriber, in order, each with its snapshot.
            var revisions: [Int64] = []
            var iterator = client.notifications.makeAsyncIterator()
            while revisions.count < 4, let message = await iterator.next() {
                if case .notification("tree/changed", let params) = message,
                    let revision = params?["revision"]?.intValue
                {
                    #expect(params?["snapshot"]?["revision"]?.intValue == revision)
                    revisions.append(revision)
                }
            }
            #expect(revisions == [2, 3, 4, 5])
            _ = try await client.call(TreeUnsubscribeRequest.self, Empty())
        }
    }

    @Test("nothing listening: a typed connection failure with the hint")
    func unreachable() {
        #expect {
            try AsyncControlClient(path: "/tmp/switchyard-test-\(getpid())-nowhere.sock")
        } throws: { error in
            "\(error)".contains("is `switchyard run` running?")
        }
    }
}
