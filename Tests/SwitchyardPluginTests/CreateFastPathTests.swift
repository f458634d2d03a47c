@_spi(Testing) import SwitchyardPlugin
import SwitchyardPluginTesting
import Testing

/// A stateless stack whose root shows the params it was created with: what reached the coordinator is in the answer.
final class ProbeCoordinator: StackCoordinator {
    @Root var home = makeHome
    private var created: CreationContext?

    init() {}

    func didCreate(_ context: CreationContext) { created = context }
    func makeHome() -> Screen {
        Screen(
            "Probe",
            props: [
                "params": created?.params ?? "absent",
                "parent": .string(created?.parent.map { "\($0.instance)/\($0.route)" } ?? "none"),
            ])
    }
}

/// `coordinator/create` on the wire (the SDK's Codable-free path for the protocol's shapes, Codable for the rest)
/// answers exactly what the Codable path answers: `PluginCore.create` with the params decoded by Codable, its result
/// encoded by Codable, or its error.
@MainActor
@Suite("Swift SDK, coordinator/create without Codable", .timeLimit(.minutes(1)))
final class CreateFastPathTests {
    static func plugin() -> Plugin {
        Plugin(
            "shop", coordinators: [ShopCoordinator.self, CartCoordinator.self, HomeTabs.self, ProbeCoordinator.self])
    }

    /// Over the protocol, as the host sends it.
    let wire = PluginTestConnection(plugin())
    /// The same plugin, driven through its public API with Codable on both sides.
    let direct = PluginTestConnection(plugin())
    private var nextID: Int64 = 1_000

    /// Both answers to `params` (JSON text): the result's JSON, or the error's code, message and `data.field`.
    func answers(_ params: String) async throws -> (wire: String, codable: String) {
        if wire.initializeResult == nil { try await wire.initialize() }
        nextID += 1
        wire.runtime.handleLine(#"{"jsonrpc":"2.0","id":\#(nextID),"method":"coordinator/create","params":\#(params)}"#)
        let wireAnswer: String
        switch wire.received.last {
        case .response(.number(nextID), let result)?: wireAnswer = JSONWriter.string(result)
        case .errorResponse(.number(nextID)?, let error)?: wireAnswer = Self.describe(error)
        default: wireAnswer = "no answer to request \(nextID): \(String(describing: wire.received.last))"
        }
        let codableAnswer: String
        do {
            let decoded: CoordinatorCreateRequest.Params
            do {
                decoded = try Coding.decode(CoordinatorCreateRequest.Params.self, from: try JSONParser.parse(params))
            } catch {
                throw ResponseError.invalidParams(method: CoordinatorCreateRequest.method, error)
            }
            let core = try #require(direct.core)
            codableAnswer = JSONWriter.string(try Coding.encode(try core.create(decoded)))
        } catch let error as ResponseError {
            codableAnswer = Self.describe(error)
        }
        return (wireAnswer, codableAnswer)
    }

    static func describe(_ error: ResponseError) -> String {
        "error \(error.code.rawValue): \(error.message) [field \(error.data?["field"]?.stringValue ?? "none")]"
    }

    @Test("new instances: params of each JSON type, a parent in the plugin, state from params, tabs")
    func newInstances() async throws {
        let cases = [
            #"{"instance":1,"type":"probe","reason":"new","params":3}"#,
            #"{"instance":2,"type":"probe","reason":"new","params":-2.5}"#,
            #"{"instance":3,"type":"probe","reason":"new","params":"milk \"2%\" é"}"#,
            #"{"instance":4,"type":"probe","reason":"new","params":true}"#,
            #"{"instance":5,"type":"probe","reason":"new","params":null}"#,
            #"{"instance":6,"type":"probe","reason":"new","params":{"id":"7","n":[1,2.5,false,null]}}"#,
            #"{"instance":7,"type":"probe","reason":"new","params":[]}"#,
            #"{"instance":8,"type":"probe","reason":"new","parent":{"instance":1,"plugin":"shop","route":"item"},"unknown":1}"#,
            #"{"instance":9,"type":"shop","reason":"new"}"#,
            #"{"instance":10,"type":"cart","reason":"new","params":{"items":3}}"#,
            #"{"instance":11,"type":"cart","reason":"new","state":{"items":4},"params":{"items":3}}"#,
            #"{"instance":12,"type":"homeTabs","reason":"new"}"#,
            #"{"instance":9,"type":"shop","reason":"restart","state":{"visits":5}}"#,
            #"{"instance":13,"type":"probe","reason":"new","params":null,"state":null}"#,
        ]
        for params in cases {
            let (wire, codable) = try await answers(params)
            #expect(wire == codable, "\(params)")
            #expect(!wire.hasPrefix("error") && !wire.hasPrefix("no answer"), "\(params): \(wire)")
        }
    }

    @Test("restore: state handed back, the host's snapshot of the instance, a parent; the answer is {}")
    func restore() async throws {
        let snapshot =
            #"{"id":21,"plugin":"shop","type":"shop","kind":"stack","status":"ok","root":{"entry":1,"route":"home","transition":"root","content":{"screen":{"name":"Home"}}},"entries":[]}"#
        let cases = [
            #"{"instance":21,"type":"shop","reason":"restore","state":{"visits":41},"restore":\#(snapshot)}"#,
            #"{"instance":22,"type":"cart","reason":"restore","params":{"items":1},"parent":{"instance":21,"plugin":"shop","route":"cart"},"state":{"items":1}}"#,
            #"{"instance":23,"type":"probe","reason":"restore","params":12,"state":null,"restore":null}"#,
        ]
        for params in cases {
            let (wire, codable) = try await answers(params)
            #expect(wire == codable, "\(params)")
            #expect(wire == "{}", "\(params)")
        }
        let shop = try #require(wire.core?.object(InstanceID(21)) as? ShopCoordinator)
        #expect(shop.state.visits == 41)
    }

    @Test("malformed params: the same invalidParams error, naming the field")
    func malformed() async throws {
        let cases: [(params: String, field: String)] = [
            (#"{"instance":"one","type":"probe","reason":"new"}"#, "instance"),
            (#"{"type":"probe","reason":"new"}"#, "instance"),
            (#"{"instance":1,"reason":"new"}"#, "type"),
            (#"{"instance":1,"type":7,"reason":"new"}"#, "type"),
            (#"{"instance":1,"type":"probe","reason":"later"}"#, "reason"),
            (
                #"{"instance":1,"type":"probe","reason":"new","parent":{"instance":1,"plugin":2,"route":"r"}}"#,
                "parent.plugin"
            ),
            (#"{"instance":1,"type":"probe","reason":"new","parent":{"instance":1,"plugin":"shop"}}"#, "parent.route"),
            (#"{"instance":1,"type":"probe","reason":"new","parent":"shop"}"#, "parent"),
            (#"{"instance":1,"type":"probe","reason":"restore","restore":[]}"#, "restore"),
            (#"{"instance":1,"type":"nothing","reason":"new"}"#, "type"),
            (#"{"instance":1,"type":"shop","reason":"restore","state":{"visits":"many"}}"#, "state"),
            (#"{"instance":1,"type":"cart","reason":"new","state":null}"#, "state"),
        ]
        for (params, field) in cases {
            let (wire, codable) = try await answers(params)
            #expect(wire == codable, "\(params)")
            #expect(
                wire.hasPrefix("error \(ErrorCode.invalidParams.rawValue):") && wire.hasSuffix("[field \(field)]"),
                "\(params): \(wire)")
        }
    }

    @Test("shapes the fast path leaves to Codable are still answered as Codable reads them")
    func fallbacks() async throws {
        for params in [#"{"instance":31.0,"type":"probe","reason":"new"}"#, #"[1]"#] {
            let (wire, codable) = try await answers(params)
            #expect(wire == codable, "\(params)")
        }
    }
}

/// Several wrappers, of different classes: each new instance's are named as the prototype's.
final class DetailListCoordinator: StackCoordinator {
    @Root var list = makeList
    @Route(.push) var detail = makeDetail
    @Route(.modal) var sheet = makeSheet
    init() {}
    func makeList() -> Screen { Screen("List") }
    func makeDetail(_ id: String) -> Screen { Screen("Detail", ["id": .string(id)]) }
    func makeSheet() -> Screen { Screen("Sheet") }
}

/// Builds another coordinator (with wrappers of its own) in its initialiser: bound through `Mirror`.
final class NestingCoordinator: StackCoordinator {
    @Root var home = makeHome
    @Route(.push) var item = makeItem
    let inner = ProbeCoordinator()
    init() {}
    func makeHome() -> Screen { Screen("Nesting") }
    func makeItem(_ id: String) -> Screen { Screen("Item", ["id": .string(id), "inner": .string(inner.home.name)]) }
}

@MainActor
@Suite("Swift SDK, route wrappers of a new instance bound without Mirror", .timeLimit(.minutes(1)))
struct RouteBindingTests {
    let connection = PluginTestConnection(
        Plugin("shop", coordinators: [DetailListCoordinator.self, NestingCoordinator.self]))

    @Test(
        "each instance's routes answer under their own names and reach its core, restored or new, with a nested coordinator too"
    )
    func namesAndCore() async throws {
        for (id, reason) in [(1, CoordinatorCreateRequest.Reason.new), (2, .restore)] {
            _ = try await connection.create(.init(instance: InstanceID(Int64(id)), type: "detailList", reason: reason))
            let detail = try await connection.route(
                .init(
                    instance: InstanceID(Int64(id)), type: "detailList", route: "detail", transition: .push,
                    params: ["value": "7"]))
            #expect(detail.content == .screen(ScreenDescriptor(name: "Detail", props: ["id": "7"])))
            let sheet = try await connection.route(
                .init(instance: InstanceID(Int64(id)), type: "detailList", route: "sheet", transition: .modal))
            #expect(sheet.content == .screen(ScreenDescriptor(name: "Sheet")))
            let object = try #require(connection.core?.object(InstanceID(Int64(id))) as? DetailListCoordinator)
            #expect([object.list.name, object.detail.name, object.sheet.name] == ["list", "detail", "sheet"])
            #expect(connection.core?.instanceID(of: object) == InstanceID(Int64(id)))
        }
        _ = try await connection.create(.init(instance: InstanceID(3), type: "nesting", reason: .restore))
        let item = try await connection.route(
            .init(instance: InstanceID(3), type: "nesting", route: "item", transition: .push, params: ["value": "1"]))
        #expect(item.content == .screen(ScreenDescriptor(name: "Item", props: ["id": "1", "inner": ""])))
    }
}
