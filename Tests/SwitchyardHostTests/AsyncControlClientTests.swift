import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardHostTestSupport
import SwitchyardTestSupport
import Testing

@Suite("Async control client against a real host", .heavy, .timeLimit(.minutes(1)))
struct AsyncControlClientTests {
    @Test("calls in flight at once each get their own answer; notifications stream; close fails what is left")
    func concurrentCalls() async throws {
        let path = "/tmp/switchyard-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))/control.sock"
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.controlSocket = path
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: options) { _ in
            let client = try AsyncControlClient(path: path, timeoutMilliseconds: 20_000)
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

    @Test("nothing listening: a typed connection failure with the hint")
    func unreachable() {
        #expect {
            try AsyncControlClient(path: "/tmp/switchyard-test-\(getpid())-nowhere.sock")
        } throws: { error in
            "\(error)".contains("is `switchyard run` running?")
        }
    }
}
