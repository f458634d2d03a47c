import SwitchyardPlugin
import SwitchyardPluginTesting
import Testing

// A small shop, declared the Stinsen way. The tests drive it through an in-process connection, as the host would over
// the pipe (handshake, encoded requests and answers), without spawning anything: this is how a team unit-tests its own
// plugin logic.

final class ShopCoordinator: StackCoordinator, StatefulCoordinator {
    nonisolated struct State: Codable, Sendable {
        var visits = 0
    }

    @Root var home = makeHome
    @Route(.push, deepLink: "item/:id") var item = makeItem
    @Route(.modal, deepLink: "cart") var cart = makeCart
    @Route(.fullScreen, deepLink: "search") var search = makeSearch
    @Route(.push, target: .coordinator("profile", in: "profile"), deepLink: "me") var profile = makeProfile

    var state = State()
    private(set) var dismissals: [String] = []

    init() {}

    func makeHome() -> Screen { Screen("Home") }

    /// The guard: item 0 does not exist. Item "lost" is a bug: an error that is no ``Rejection``.
    func makeItem(_ id: String) throws -> Screen {
        guard id != "0" else { throw Rejection("there is no item 0") }
        guard id != "lost" else { throw InventoryError.missing(id: id) }
        state.visits += 1
        return Screen("Item", ["id": .string(id)])
    }

    func makeCart() -> CartCoordinator { CartCoordinator(items: 2) }
    func makeSearch(_ query: SearchQuery) -> Screen {
        Screen("Search", ["text": .string(query.text), "limit": .int(Int64(query.limit))])
    }
    func makeProfile() -> PluginCoordinator { PluginCoordinator() }

    func dismissed(route: String, entry: EntryID, reason: CoordinatorDismissedNotification.Reason) {
        dismissals.append("\(route) \(reason.rawValue)")
    }
}

nonisolated enum InventoryError: Error {
    case missing(id: String)
}

nonisolated struct SearchQuery: Codable, Sendable {
    var text: String
    var limit: Int
    var sort: String? = nil
}

final class CartCoordinator: StackCoordinator, StatefulCoordinator {
    nonisolated struct State: Codable, Sendable {
        var items = 0
    }

    @Root var list = makeList
    var state = State()

    init() {}

    convenience init(items: Int) {
        self.init()
        state.items = items
    }

    func makeList() -> Screen { Screen("Cart", ["items": .int(Int64(state.items))]) }
}

final class HomeTabs: TabsCoordinator {
    @Tab(deepLink: "shop") var shop = makeShop
    @Tab(deepLink: "help") var help = makeHelp
    private(set) var selections: [String] = []

    init() {}

    func makeShop() -> ShopCoordinator { ShopCoordinator() }
    func makeHelp() -> Screen { Screen("Help") }
    func initialTab() -> String? { tab(\.help) }
    func tabSelected(_ tab: String, isRepeat: Bool) { selections.append(isRepeat ? "\(tab) again" : tab) }
}

/// Starts with a tab it does not declare (a typo): the SDK passes the name on, for the host to name it.
final class MisspelledTabs: TabsCoordinator {
    @Tab var help = makeHelp

    init() {}

    func makeHelp() -> Screen { Screen("Help") }
    func initialTabs() -> [String]? { [tab(\.help), "hlep"] }
}

/// Resolves `switchyard://…/orders/<year>/<number>` itself (Coordinator's DeepLinkHandling).
final class OrdersCoordinator: StackCoordinator, DeepLinkHandling {
    @Root var list = makeList
    @Route(.push) var order = makeOrder

    init() {}

    func makeList() -> Screen { Screen("Orders") }
    func makeOrder(_ id: String) -> Screen { Screen("Order", ["id": .string(id)]) }

    static func handleDeepLink(_ cursor: inout DeepLinkCursor) throws -> DeepLinkDecision {
        guard let year = cursor.next(), let number = cursor.next(), Int(year) != nil else {
            throw DeepLinkRejection("an order link is /YEAR/NUMBER")
        }
        return DeepLinkDecision(route: "order", params: ["id": .string("\(year)-\(number)")])
    }
}

@Suite("Swift SDK, in-process", .timeLimit(.minutes(1)))
struct SDKTests {
    let connection = PluginTestConnection(
        Plugin(
            "shop", version: "1.2.3",
            coordinators: [ShopCoordinator.self, CartCoordinator.self, HomeTabs.self, OrdersCoordinator.self]))
    /// The coordinator objects, for what the protocol does not show (the connection built the core from the Plugin).
    var core: PluginCore { connection.core! }

    func create(
        _ id: Int64, _ type: String, reason: CoordinatorCreateRequest.Reason = .new, params: JSONValue? = nil,
        parent: CoordinatorCreateRequest.Parent? = nil, state: JSONValue? = nil
    ) async throws -> CoordinatorCreateRequest.Result {
        try await connection.create(
            .init(instance: InstanceID(id), type: type, reason: reason, params: params, parent: parent, state: state))
    }

    func route(
        _ id: Int64, _ route: String, _ transition: Transition = .push, _ params: JSONValue? = nil
    ) async throws -> CoordinatorRouteRequest.Result {
        try await connection.route(
            .init(instance: InstanceID(id), type: "shop", route: route, transition: transition, params: params))
    }

    @Test(
        "the route table comes from the declarations: names from properties, transitions, patterns, typed params, targets"
    )
    func routeTable() async throws {
        let declarations = try await connection.initialize().coordinators
        let shop = try #require(declarations.first { $0.type == "shop" })
        #expect(shop.kind == .stack)
        #expect(shop.initialRoute == "home")
        #expect(shop.routes.map(\.name) == ["home", "item", "cart", "search", "profile"])
        #expect(shop.routes.map(\.transition) == [.root, .push, .modal, .fullScreen, .push])
        let item = try #require(shop.route(named: "item"))
        #expect(item.deepLink == "item/:id")
        #expect(item.params?.map(\.name) == ["id"])
        #expect(shop.route(named: "cart")?.target == CoordinatorReference(type: "cart"))
        #expect(shop.route(named: "profile")?.target == CoordinatorReference(plugin: "profile", type: "profile"))
        let search = try #require(shop.route(named: "search")?.params)
        // A Codable struct input declares its fields (probed from its synthesized init(from:)), optionals as such.
        #expect(search.map(\.name) == ["text", "limit", "sort"])
        #expect(search.map(\.type) == [.string, .integer, .string])
        #expect(search.map(\.isRequired) == [true, true, false])
        let tabs = try #require(declarations.first { $0.type == "homeTabs" })
        #expect(tabs.kind == .tabs && tabs.routes.map(\.name) == ["shop", "help"])
        #expect(declarations.first { $0.type == "orders" }?.customDeepLinks == true)
    }

    @Test("create answers the initial content and state; a route runs its factory with typed params")
    func factories() async throws {
        let created = try await create(1, "shop")
        #expect(created.root == .init(route: "home", content: .screen(ScreenDescriptor(name: "Home"))))
        #expect(created.state == ["visits": 0])

        let item = try await route(1, "item", .push, ["id": "7"])
        #expect(item.content == .screen(ScreenDescriptor(name: "Item", props: ["id": "7"])))
        #expect(item.state == ["visits": 1])

        let search = try await route(1, "search", .fullScreen, ["text": "milk", "limit": 5])
        #expect(search.content == .screen(ScreenDescriptor(name: "Search", props: ["text": "milk", "limit": 5])))
    }

    @Test("a guard rejects with -32013 and its reason; bad params and unknown routes are typed errors naming the field")
    func errors() async throws {
        _ = try await create(1, "shop")
        await #expect { try await route(1, "item", .push, ["id": "0"]) } throws: { error in
            (error as? ResponseError)?.code == .rejectedByGuard
                && (error as? ResponseError)?.message == "there is no item 0"
        }
        await #expect { try await route(1, "search", .fullScreen, ["text": "milk", "limit": "five"]) } throws: {
            error in
            guard let error = error as? ResponseError else { return false }
            return error.code == .invalidParams && error.message.contains("limit")
        }
        await #expect { try await route(1, "nowhere") } throws: { ($0 as? ResponseError)?.code == .routeNotFound }
        await #expect { try await route(99, "item", .push, ["id": "1"]) } throws: {
            ($0 as? ResponseError)?.code == .instanceNotFound
        }
        await #expect { try await create(2, "ghost") } throws: { ($0 as? ResponseError)?.code == .invalidParams }
    }

    @Test(
        "any other error a factory throws is an internalError naming the route, the type, the error and the fix, whose data carries the error's type and description"
    )
    func handlerErrorDescription() async throws {
        _ = try await create(1, "shop")
        let error = await #expect(throws: ResponseError.self) { try await route(1, "item", .push, ["id": "lost"]) }
        #expect(error?.code == .internalError)
        #expect(
            error?.message
                == #"route 'item' of shop (ShopCoordinator): its factory threw InventoryError: missing(id: "lost"); fix it, or throw Rejection("why") to refuse the route on purpose"#
        )
        #expect(error?.data?["route"] == "item")
        #expect(error?.data?["type"] == "InventoryError")
        #expect(error?.data?["description"] == #"SwitchyardPluginTests.InventoryError.missing(id: "lost")"#)
    }

    @Test("a factory returning one of the plugin's own coordinators: the host creates that very object")
    func ownChild() async throws {
        _ = try await create(1, "shop")
        let cart = try await route(1, "cart", .modal)
        guard case .coordinator(let reference, let params) = cart.content else {
            Issue.record("expected a coordinator, got \(cart.content)")
            return
        }
        #expect(reference == CoordinatorReference(type: "cart"))
        #expect(params == ["items": 2])
        let child = try await create(
            2, "cart", params: params, parent: .init(instance: InstanceID(1), plugin: "shop", route: "cart"))
        #expect(child.root?.content == .screen(ScreenDescriptor(name: "Cart", props: ["items": 2])))
        #expect((core.object(InstanceID(2)) as? CartCoordinator)?.state.items == 2)
    }

    @Test("restore after a restart rebuilds the instance from the state the host kept, and answers nothing new")
    func restore() async throws {
        let restored = try await create(5, "shop", reason: .restore, state: ["visits": 41])
        #expect(restored == CoordinatorCreateRequest.Result())
        let shop = try #require(core.object(InstanceID(5)) as? ShopCoordinator)
        #expect(shop.state.visits == 41)
        #expect(try await route(5, "item", .push, ["id": "1"]).state == ["visits": 42])
        await #expect { try await create(6, "shop", reason: .restore, state: ["visits": "many"]) } throws: {
            ($0 as? ResponseError)?.code == .invalidParams
        }
    }

    @Test("tabs: every tab's content at creation, the initial tab, tab selection and dismissal hooks")
    func tabsAndHooks() async throws {
        let tabs = try await create(1, "homeTabs")
        #expect(tabs.tabs?.map(\.route) == ["shop", "help"])
        #expect(tabs.selectedTab == "help")
        connection.notify(
            CoordinatorTabSelectedNotification.self, .init(instance: InstanceID(1), tab: "shop", isRepeat: false))
        connection.notify(
            CoordinatorTabSelectedNotification.self, .init(instance: InstanceID(1), tab: "shop", isRepeat: true))
        #expect((core.object(InstanceID(1)) as? HomeTabs)?.selections == ["shop", "shop again"])

        _ = try await create(2, "shop")
        connection.notify(
            CoordinatorDismissedNotification.self,
            .init(instance: InstanceID(2), entry: EntryID(9), route: "item", reason: .user))
        #expect((core.object(InstanceID(2)) as? ShopCoordinator)?.dismissals == ["item user"])
        try await connection.destroy(.init(instance: InstanceID(2), type: "shop"))
        #expect(core.object(InstanceID(2)) == nil)
    }

    @Test(
        "a tab name from initialTabs() that is not declared is passed on (the host's invalidAnswer names it), not dropped"
    )
    func undeclaredInitialTab() async throws {
        let connection = PluginTestConnection(Plugin("tabs", coordinators: [MisspelledTabs.self]))
        let created = try await connection.create(.init(instance: InstanceID(1), type: "misspelledTabs", reason: .new))
        #expect(created.tabs?.map(\.route) == ["help", "hlep"])
    }

    @Test("a custom deep-link handler consumes segments through the cursor, or rejects the link")
    func deepLinkHandler() async throws {
        let decision = try await connection.deepLink(
            .init(instance: nil, type: "orders", segments: ["2026", "17", "extra"], query: [:], dryRun: true))
        #expect(decision.route == "order" && decision.params == ["id": "2026-17"] && decision.consumed == 2)
        await #expect {
            try await connection.deepLink(
                .init(instance: nil, type: "orders", segments: ["soon"], query: [:], dryRun: true))
        } throws: {
            ($0 as? ResponseError)?.code == .deepLinkInvalid
        }
    }

    @Test("chains are typed: the steps a coordinator's logic would send, checked without a host")
    func typedChains() throws {
        let shop = ShopCoordinator()
        let chain = shop.router.chain.popToRoot().route(to: \.item, "42").route(to: \.cart)
        #expect(chain.steps == [.popToRoot, .route("item", ["id": "42"]), .route("cart")])
        let remote = shop.router.chain.route(to: \.profile).route("settings")
        #expect(remote.steps == [.route("profile"), .route("settings")])
        let tabs = HomeTabs().router.chain.focusFirst(\.shop).route(to: \.search, SearchQuery(text: "tea", limit: 3))
        #expect(tabs.steps == [.focusFirst("shop"), .route("search", ["text": "tea", "limit": 3])])
    }
}

@Suite("Swift SDK, chains through the connection", .timeLimit(.minutes(1)))
struct ChainConnectionTests {
    @Test("a coordinator's router applies its chain through its own core, even with another plugin's core alive")
    func routerUsesItsOwnCore() async throws {
        let connection = PluginTestConnection(
            Plugin("shop", coordinators: [ShopCoordinator.self, CartCoordinator.self]))
        // A second plugin in the same process: the router must not pick up this core (the old global would have).
        let other = PluginTestConnection(Plugin("other", coordinators: [ShopCoordinator.self]))
        _ = try await other.create(.init(instance: InstanceID(1), type: "shop", reason: .new))
        _ = try await connection.create(.init(instance: InstanceID(1), type: "shop", reason: .new))
        connection.onRequest(NavigateRequest.self) { params in
            .init(revision: 3, instance: params.instance ?? InstanceID(0))
        }

        let shop = try #require(connection.core?.object(InstanceID(1)) as? ShopCoordinator)
        #expect(shop.instanceID == InstanceID(1))
        let landed = try await shop.router.chain.popToRoot().route(to: \.item, "42").apply()
        #expect(landed.revision == 3 && landed.coordinator === shop)
        #expect(
            connection.requests(NavigateRequest.self) == [
                .init(instance: InstanceID(1), steps: [.popToRoot, .route("item", ["id": "42"])])
            ])
        #expect(other.requests(NavigateRequest.self).isEmpty)
    }

    @Test("a chain on an object no core registered builds its steps but cannot apply")
    func unregisteredCannotApply() async throws {
        let shop = ShopCoordinator()
        #expect(shop.instanceID == nil)
        await #expect(throws: ResponseError.self) { try await shop.router.popToRoot() }
    }
}
