/// The Swift plugin: its own package, the plugin's logic in a library (so its tests drive it in-process through
/// `SwitchyardPluginTesting`) and a small executable that serves it on stdio.
extension PluginTemplate {
    /// The library holding the coordinators and the `plugin` value.
    var swiftLibrary: String { names.pascal + "Plugin" }

    var swiftFiles: [GeneratedFile] {
        var files = [
            GeneratedFile(path: "Package.swift", text: packageManifest),
            GeneratedFile(path: "Sources/\(swiftLibrary)/Plugin.swift", text: swiftPlugin),
            GeneratedFile(path: "Sources/\(swiftLibrary)/\(names.pascal)Coordinator.swift", text: swiftStack),
        ]
        switch kind {
        case .stack: break
        case .tabs:
            files.append(
                GeneratedFile(path: "Sources/\(swiftLibrary)/\(names.pascal)TabsCoordinator.swift", text: swiftTabs))
        case .wrapper:
            files.append(
                GeneratedFile(
                    path: "Sources/\(swiftLibrary)/\(names.pascal)NavigationCoordinator.swift", text: swiftWrapper))
        }
        files += [
            GeneratedFile(path: "Sources/\(names.plugin)/main.swift", text: swiftMain),
            GeneratedFile(path: "Tests/\(swiftLibrary)Tests/\(swiftLibrary)Tests.swift", text: swiftTests),
            GeneratedFile(path: "switchyard.json", text: manifest(command: [".build/debug/\(names.plugin)"])),
            GeneratedFile(path: "scenario.txt", text: scenario),
            GeneratedFile(path: ".gitignore", text: ".build/\n.swiftpm/\nPackage.resolved\n"),
        ]
        return files
    }

    /// The package the plugin's product comes from: its identity, which `.product(package:)` names.
    private var switchyardPackage: (dependency: String, identity: String) {
        switch sdk {
        case .checkout(let path):
            return (
                """
                // A Switchyard checkout on this machine: builds offline, against the SDK as it is there. To share
                        // this package, depend on a release instead: .package(url: "<Switchyard's repository>", from: "0.1.0")
                        .package(name: "Switchyard", path: "\(path)"),
                """, "Switchyard"
            )
        case .released(let url, let version):
            var identity = String(url.split(separator: "/").last ?? "switchyard")
            if identity.hasSuffix(".git") { identity.removeLast(4) }
            return (
                """
                // Switchyard's plugin SDK, from the release this plugin was generated with or a later 0.x
                        // (see Docs/SDKs.md, "Versions", in Switchyard). For a local checkout: .package(path: "…/switchyard")
                        .package(url: "\(url)", from: "\(version)"),
                """, identity
            )
        }
    }

    var packageManifest: String {
        let (dependency, identity) = switchyardPackage
        return """
            // swift-tools-version: 6.2
            // The \(names.plugin) plugin for Switchyard. Its logic is the \(swiftLibrary) library, which the tests drive
            // in-process; the \(names.plugin) executable only serves it to the host on stdin and stdout.
            //
            //   swift build && swift test
            //   switchyard run --manifest switchyard.json --script scenario.txt
            import PackageDescription

            // Coordinators run on the main actor (the SDK calls them there), so every target defaults to it.
            let mainActor: [SwiftSetting] = [.defaultIsolation(MainActor.self)]

            let package = Package(
                name: "\(names.plugin)",
                platforms: [.macOS(.v15)],
                products: [
                    .executable(name: "\(names.plugin)", targets: ["\(names.plugin)"]),
                ],
                dependencies: [
                    \(dependency)
                ],
                targets: [
                    .target(
                        name: "\(swiftLibrary)",
                        dependencies: [.product(name: "SwitchyardPlugin", package: "\(identity)")],
                        swiftSettings: mainActor
                    ),
                    .executableTarget(
                        name: "\(names.plugin)",
                        dependencies: ["\(swiftLibrary)"],
                        swiftSettings: mainActor,
                        // The Swift runtime linked in: the plugin is ready about a millisecond sooner (no dynamic loading).
                        linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))]
                    ),
                    .testTarget(
                        name: "\(swiftLibrary)Tests",
                        dependencies: [
                            "\(swiftLibrary)",
                            .product(name: "SwitchyardPlugin", package: "\(identity)"),
                            .product(name: "SwitchyardPluginTesting", package: "\(identity)"),
                        ],
                        swiftSettings: mainActor
                    ),
                ],
                swiftLanguageModes: [.v6]
            )

            """
    }

    var swiftPlugin: String {
        let types =
            ["\(names.pascal)Coordinator.self"] + (kind == .tabs ? ["\(names.pascal)TabsCoordinator.self"] : [])
            + (kind == .wrapper ? ["\(names.pascal)NavigationCoordinator.self"] : [])
        return """
            import SwitchyardPlugin

            /// The plugin as the host sees it: the name manifests and other plugins' routes use, and every coordinator type
            /// it serves (a type missing here cannot be created, even as another type's child). Public so the executable
            /// serves it and the tests drive it.
            public let plugin = Plugin("\(names.plugin)", version: "0.1.0", coordinators: [\(types.joined(separator: ", "))])

            """
    }

    var swiftStack: String {
        #"""
        import SwitchyardPlugin

        /// The \#(names.plugin) flow: a home screen, items pushed by id, settings presented over them.
        final class \#(names.pascal)Coordinator: StackCoordinator {
            @Root var home = makeHome
            // The `Int` input declares an integer `id` in the route table: the host turns the link item/42 into 42 and
            // refuses item/abc before this process is asked.
            @Route(.push, deepLink: "item/:id") var item = makeItem
            @Route(.modal, deepLink: "settings") var settings = makeSettings

            init() {}

            // Screen names are what the UI shell maps to views; the plugin's prefix keeps them apart from other plugins'.
            func makeHome() -> Screen { Screen("\#(names.pascal)Home") }

            func makeItem(_ id: Int) throws -> Screen {
                // A guard: a Rejection fails the whole navigation (rejectedByGuard) and leaves the tree as it was.
                guard id > 0 else { throw Rejection("there is no item \(id)") }
                return Screen("\#(names.pascal)Item", ["id": .int(Int64(id))])
            }

            func makeSettings() -> Screen { Screen("\#(names.pascal)Settings") }
        }

        """#
    }

    var swiftTabs: String {
        #"""
        import SwitchyardPlugin

        /// The app's tab bar: the \#(names.plugin) flow in the first tab, a plain screen in the second. The deep links name the
        /// tab a link selects before it continues inside it (browse/item/42).
        final class \#(names.pascal)TabsCoordinator: TabsCoordinator {
            @Tab(deepLink: "browse") var browse = makeBrowse
            @Tab(deepLink: "about") var about = makeAbout

            init() {}

            // Returning one of this plugin's coordinators makes the host create an instance of it here, with its own stack.
            func makeBrowse() -> \#(names.pascal)Coordinator { \#(names.pascal)Coordinator() }
            func makeAbout() -> Screen { Screen("\#(names.pascal)About") }
        }

        """#
    }

    var swiftWrapper: String {
        #"""
        import SwitchyardPlugin

        /// A container around the \#(names.plugin) flow (Stinsen's NavigationViewCoordinator): the UI draws the navigation bar
        /// once for it, and deep links pass through it to the stack inside.
        final class \#(names.pascal)NavigationCoordinator: WrapperCoordinator {
            @Child var content = makeContent

            init() {}

            func makeContent() -> \#(names.pascal)Coordinator { \#(names.pascal)Coordinator() }
        }

        """#
    }

    var swiftMain: String {
        """
        import \(swiftLibrary)

        // Serves the host on stdin and stdout until the host closes stdin. `print` goes to the host log: stdout belongs
        // to the protocol.
        plugin.run()

        """
    }

    var swiftTests: String {
        var kindTest = ""
        switch kind {
        case .stack: break
        case .tabs:
            kindTest = #"""


                    @Test("the tab bar opens the \#(names.plugin) stack in its first tab and a screen in the second")
                    func tabs() async throws {
                        let created = try await connection.create(.init(instance: InstanceID(2), type: "\#(rootType)", reason: .new))
                        #expect(created.tabs?.map(\.route) == ["browse", "about"])
                        #expect(created.tabs?.first?.content == .coordinator(CoordinatorReference(type: "\#(names.type)"), params: nil))
                        #expect(created.tabs?.last?.content == .screen(ScreenDescriptor(name: "\#(names.pascal)About")))
                    }
                """#
        case .wrapper:
            kindTest = #"""


                    @Test("the wrapper's child is the \#(names.plugin) stack")
                    func wrapper() async throws {
                        let created = try await connection.create(.init(instance: InstanceID(2), type: "\#(rootType)", reason: .new))
                        #expect(created.child == .coordinator(CoordinatorReference(type: "\#(names.type)"), params: nil))
                    }
                """#
        }
        return #"""
            import \#(swiftLibrary)
            import SwitchyardPlugin
            import SwitchyardPluginTesting
            import Testing

            /// The plugin driven in-process by `PluginTestConnection`, which plays the host over real protocol lines
            /// (handshake, encoded requests and answers): what passes here is what the host sees, with no process to start.
            @Suite(.timeLimit(.minutes(1)))
            struct \#(swiftLibrary)Tests {
                let connection = PluginTestConnection(plugin)

                /// Creates a stack as the host does when a route opens one, as instance 1.
                private func createStack() async throws -> CoordinatorCreateRequest.Result {
                    try await connection.create(.init(instance: InstanceID(1), type: "\#(names.type)", reason: .new))
                }

                private func route(_ route: String, _ transition: Transition, _ params: JSONValue? = nil) async throws -> RouteContent {
                    try await connection.route(.init(instance: InstanceID(1), type: "\#(names.type)", route: route, transition: transition, params: params)).content
                }

                @Test("the route table declares the item route's deep link and its integer id")
                func routeTable() async throws {
                    let types = try await connection.initialize().coordinators
                    let item = try #require(types.first { $0.type == "\#(names.type)" }?.route(named: "item"))
                    #expect(item.deepLink == "item/:id")
                    #expect(item.params == [ParamDeclaration(name: "id", type: .integer)])
                }

                @Test("a new stack shows the home screen")
                func home() async throws {
                    let created = try await createStack()
                    #expect(created.root?.route == "home")
                    #expect(created.root?.content == .screen(ScreenDescriptor(name: "\#(names.pascal)Home")))
                }

                @Test("an item shows its id, and the guard refuses item 0")
                func item() async throws {
                    _ = try await createStack()
                    #expect(try await route("item", .push, ["id": 42]) == .screen(ScreenDescriptor(name: "\#(names.pascal)Item", props: ["id": 42])))
                    let refusal = await #expect(throws: ResponseError.self) { try await route("item", .push, ["id": 0]) }
                    #expect(refusal?.code == .rejectedByGuard)
                }\#(kindTest)
            }

            /// The plugin run by the real host, with its navigation core (`NavigationTestStore`): every change of the
            /// composed tree, and every notification the plugin receives, is asserted.
            @Suite(.timeLimit(.minutes(1)))
            @MainActor
            struct \#(swiftLibrary)NavigationTests {
                @Test("an item pushed onto the stack, then the user goes back: the tree follows and the plugin hears it")
                func openAndGoBack() async throws {
                    let store = try await NavigationTestStore([plugin], root: CoordinatorReference(plugin: "\#(names.plugin)", type: "\#(rootType)"))
                    let stack = try #require(store.tree.find("\#(names.plugin)", "\#(names.type)"))
                    let item = store.nextEntryID
                    try await store.send(.navigate(from: stack.id, [.route("item", ["id": 42])])) { tree in
                        tree[stack.id]?.entries = [
                            EntrySnapshot(
                                entry: item, route: "item", transition: .push, params: ["id": 42],
                                content: .screen(ScreenDescriptor(name: "\#(names.pascal)Item", props: ["id": 42])))
                        ]
                    }
                    try await store.send(.dismiss(instance: stack.id, entry: item)) { tree in tree[stack.id]?.entries = [] }
                    store.receive(.dismissed("\#(names.plugin)", instance: stack.id, entry: item, route: "item", reason: .user))
                    await store.finish()
                }
            }

            """#
    }
}
