import SwitchyardPlugin
import SwitchyardPluginTesting
import Testing

/// A club whose offers are for members: a guest's deep link to an offer waits until the member root is active,
/// with the join sheet shown meanwhile (Protocol/README.md §13.5).
final class ClubCoordinator: StackCoordinator {
    @Root var guest = makeGuest
    @Root var member = makeMember
    @Route(.modal) var join = makeJoin
    @Route(.push, deepLink: "offer/:id") var offer = makeOffer

    private var isMember = false

    init() {}

    func makeGuest() -> Screen {
        isMember = false
        return Screen("Guest")
    }

    func makeMember() -> Screen {
        isMember = true
        return Screen("Member")
    }

    func makeJoin() -> Screen { Screen("Join") }

    /// The guard: "not yet" for a guest, with the way in shown meanwhile.
    func makeOffer(_ id: Int) throws -> Screen {
        guard isMember else {
            throw Rejection("members only", deferUntil: .root("member"), redirect: [.route("join")])
        }
        return Screen("Offer", ["id": .int(Int64(id))])
    }
}

@Suite("Swift SDK: a guard's deferral", .timeLimit(.minutes(1)))
struct DeferralTests {
    @MainActor
    @Test("Rejection(deferUntil:redirect:) answers -32013 with data.defer: the condition and the redirect's steps")
    func deferral() async throws {
        let connection = PluginTestConnection(Plugin("club", coordinators: [ClubCoordinator.self]))
        _ = try await connection.initialize()
        _ = try await connection.create(.init(instance: InstanceID(1), type: "club", reason: .new))
        let offer = CoordinatorRouteRequest.Params(
            instance: InstanceID(1), type: "club", route: "offer", transition: .push, params: ["id": 7])
        do {
            _ = try await connection.route(offer)
            Issue.record("a guest got the offer")
        } catch {
            #expect(error.code == .rejectedByGuard && error.message == "members only")
            #expect(error.data?["route"] == "offer")
            let deferral = try #require(try LinkDeferral(refusal: error))
            #expect(deferral == LinkDeferral(until: .root("member"), redirect: [.route("join")]))
        }
        _ = try await connection.route(
            .init(instance: InstanceID(1), type: "club", route: "member", transition: .root))
        let shown = try await connection.route(offer)
        #expect(shown.content == .screen(ScreenDescriptor(name: "Offer", props: ["id": 7])))
        // A plain rejection carries no deferral.
        #expect(try LinkDeferral(refusal: ResponseError(.rejectedByGuard, "no", data: ["route": "x"])) == nil)
    }
}
