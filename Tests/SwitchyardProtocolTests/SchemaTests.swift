import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import SwitchyardSpec
import Testing

/// `Protocol/schema/` is checked against the code and the transcripts, so neither can drift from the spec.
@Suite("Protocol schemas", .timeLimit(.minutes(1)))
struct SchemaTests {
    static let schemaDirectory = "\(packageRoot)/Protocol/schema"
    static let transcriptDirectory = "\(packageRoot)/Protocol/transcripts"

    let validator = SchemaValidator(directory: schemaDirectory)

    struct Registered: Equatable, CustomStringConvertible {
        let method: String, kind: String, direction: String, schema: String
        var description: String { "\(method) (\(kind), \(direction))" }
    }

    func registry() throws -> [Registered] {
        try validator.document("methods.json")["methods"]?.arrayValue?.map {
            Registered(
                method: $0["method"]?.stringValue ?? "", kind: $0["kind"]?.stringValue ?? "",
                direction: $0["direction"]?.stringValue ?? "", schema: $0["schema"]?.stringValue ?? "")
        } ?? []
    }

    @Test("every schema file parses, uses only supported keywords, and resolves its $refs")
    func lint() throws {
        let files = FileSystem.listDirectory(Self.schemaDirectory).filter {
            $0.hasSuffix(".json") && $0 != "methods.json"
        }
        #expect(files.count >= 8)
        for file in files { try validator.lint(file) }
    }

    @Test("methods.json lists exactly the methods the code defines, each with a schema for its params (and result)")
    func registryMatchesCode() throws {
        let registered = try registry()
        let fromCode = ProtocolMethods.all.map { "\($0.method) (\($0.kind.rawValue), \($0.direction.rawValue))" }
        #expect(registered.map(\.description).sorted() == fromCode.sorted())
        for entry in registered {
            let document = try validator.document(entry.schema)
            #expect(document["$defs"]?["params"] != nil, "\(entry.schema) has no $defs/params")
            if entry.kind == "request" {
                #expect(document["$defs"]?["result"] != nil, "\(entry.schema) has no $defs/result")
            }
        }
    }

    @Test(
        "every message a transcript writes verbatim is a valid envelope whose params and result match the method's schema"
    )
    func transcriptsValidate() throws {
        let schemas = Dictionary(uniqueKeysWithValues: try registry().map { ($0.method, $0.schema) })
        var validated = 0
        for name in FileSystem.listDirectory(Self.transcriptDirectory) where name.hasSuffix(".jsonl") {
            let bytes = try FileSystem.readFile("\(Self.transcriptDirectory)/\(name)")
            let header = try JSONParser.parse(
                String(String(decoding: bytes, as: UTF8.self).split(separator: "\n").first ?? ""))
            // A transcript replayed against the host writes the plugin's messages verbatim, and the other way round;
            // the other side's lines are patterns ("$any", omitted keys) and are matched, not validated.
            let verbatim: Transcript.Side =
                header["replay"] == "host" ? .plugin : header["replay"] == "control" ? .client : .host
            let transcript = try Transcript(parsing: bytes)
            var methodOfRequest: [String: String] = [:]  // "side:id" -> method, to find a response's schema
            for step in transcript.steps {
                let message = step.message
                let id = message["id"].map { JSONWriter.string($0) } ?? ""
                if let method = message["method"]?.stringValue, message["id"] != nil {
                    methodOfRequest["\(step.side.rawValue):\(id)"] = method
                }
                guard step.side == verbatim, !step.invalid, step.sync == nil, message["raw"] == nil else { continue }
                let location = "\(name) line \(step.line)"
                validated += 1
                let envelopeErrors = try validator.validate(message, against: "envelope.json")
                #expect(envelopeErrors == [], "\(location): \(envelopeErrors)")
                if let method = message["method"]?.stringValue {
                    guard let schema = schemas[method] else { continue }  // unknown methods are the point of some steps
                    let errors = try validator.validate(message["params"] ?? .null, against: "\(schema)#/$defs/params")
                    #expect(errors == [], "\(location): \(errors)")
                } else if let result = message["result"] {
                    let requester = step.side == .host ? "plugin" : "host"
                    if let method = methodOfRequest["\(requester):\(id)"], let schema = schemas[method] {
                        let errors = try validator.validate(result, against: "\(schema)#/$defs/result")
                        #expect(errors == [], "\(location): \(errors)")
                    }
                }
            }
        }
        #expect(validated >= 10)
    }

    @Test("what the Swift types encode validates against the schemas")
    func swiftEncodingsValidate() throws {
        let params = InitializeRequest.Params(
            protocolVersions: [1], host: PluginInfo(name: "switchyard", version: "0.1.0"), pluginName: "todos",
            limits: .defaults)
        #expect(try validator.validate(try Coding.encode(params), against: "initialize.json#/$defs/params") == [])
        let result = InitializeRequest.Result(
            protocolVersion: 1, plugin: PluginInfo(name: "todos", version: "1"),
            coordinators: [
                CoordinatorDeclaration(
                    type: "todos", kind: .stack, initialRoute: "list",
                    routes: [
                        RouteDeclaration(name: "list", transition: .root),
                        RouteDeclaration(
                            name: "todo", transition: .push, deepLink: "todo/:id",
                            params: [ParamDeclaration(name: "id", type: .string, required: true)]),
                        RouteDeclaration(
                            name: "project", transition: .modal,
                            target: CoordinatorReference(plugin: "projects", type: "projects")),
                    ], customDeepLinks: false)
            ])
        #expect(try validator.validate(try Coding.encode(result), against: "initialize.json#/$defs/result") == [])
        #expect(
            try validator.validate(
                try Coding.encode(LogNotification.Params(level: .info, message: "x")), against: "log.json#/$defs/params"
            ) == [])
        #expect(
            try validator.validate(
                ResponseError(.routeNotFound, "x", data: ["route": "y"]).json,
                against: "common.json#/$defs/ResponseError") == [])
        let route = CoordinatorRouteRequest.Params(
            instance: InstanceID(3), type: "todos", route: "todo", transition: .push, params: ["id": "1"],
            link: DeepLinkContext(
                url: "switchyard://todos/todo/1?x=y", segments: ["todos", "todo", "1"], index: 1, query: ["x": "y"]))
        #expect(try validator.validate(try Coding.encode(route), against: "coordinator.route.json#/$defs/params") == [])
        for content in [
            RouteContent.screen(ScreenDescriptor(name: "Todo", props: ["id": "1"])),
            .coordinator(CoordinatorReference(plugin: "projects", type: "project"), params: ["id": "p"]),
        ] {
            #expect(
                try validator.validate(
                    try Coding.encode(CoordinatorRouteRequest.Result(content: content, state: ["k": 1])),
                    against: "coordinator.route.json#/$defs/result") == [])
        }
        let create = CoordinatorCreateRequest.Result(
            root: .init(route: "list", content: .screen(ScreenDescriptor(name: "List"))), state: nil)
        #expect(
            try validator.validate(try Coding.encode(create), against: "coordinator.create.json#/$defs/result") == [])
        let steps = NavigateRequest.Params(
            instance: InstanceID(2),
            steps: [
                .focusFirst("todos"), .child, .popToRoot, .route("todo", ["id": "42"]), .pop(EntryID(7)), .popTo(-1),
                .setRoot("a", keepStack: true),
            ])
        #expect(try validator.validate(try Coding.encode(steps), against: "navigate.json#/$defs/params") == [])
        let snapshot = TreeSnapshot(
            revision: 3, root: InstanceID(1),
            instances: [
                InstanceSnapshot(
                    id: InstanceID(1), plugin: "main", type: "main", kind: .stack,
                    root: EntrySnapshot(
                        entry: EntryID(1), route: "home", transition: .root, content: .coordinator(InstanceID(2))),
                    entries: []),
                InstanceSnapshot(
                    id: InstanceID(2), plugin: "home", type: "tabs", kind: .tabs,
                    parent: .init(instance: InstanceID(1), entry: EntryID(1)),
                    status: .unavailable, unavailableReason: "restarting",
                    tabs: [
                        EntrySnapshot(
                            entry: EntryID(2), route: "a", transition: .tab,
                            content: .screen(ScreenDescriptor(name: "A")))
                    ], selectedTab: "a"),
            ])
        #expect(try validator.validate(try Coding.encode(snapshot), against: "tree.json") == [])
        try deferredLinksValidate()
        // And the schemas are not vacuous:
        #expect(try validator.validate(["op": "teleport"], against: "common.json#/$defs/NavigationStep") != [])
        #expect(try validator.validate(["protocolVersion": 1], against: "initialize.json#/$defs/result") != [])
    }

    /// §13.5's types: a guard's deferral, the link waiting, `open` deferred, `deepLink/cancel` and `deepLink/changed`.
    func deferredLinksValidate() throws {
        let link = DeferredDeepLink(
            id: 1, url: "switchyard://todos/todo/42", until: .root("authenticated", instance: InstanceID(1)),
            deferMs: 300_000)
        let deferral = LinkDeferral(until: .tab("inbox", plugin: "authenticated", type: "home"), redirect: [.popToRoot])
        #expect(try validator.validate(deferral.json, against: "common.json#/$defs/LinkDeferral") == [])
        let opened = OpenRequest.Result(revision: 4, instance: InstanceID(1), deferred: link, replaced: link)
        #expect(try validator.validate(try Coding.encode(opened), against: "open.json#/$defs/result") == [])
        let request = OpenRequest.Params(url: link.url, defer: true, deferMs: 1_000)
        #expect(try validator.validate(try Coding.encode(request), against: "open.json#/$defs/params") == [])
        for cancelled in [link, nil] {
            let result = DeepLinkCancelRequest.Result(cancelled: cancelled)
            #expect(
                try validator.validate(try Coding.encode(result), against: "deepLink.cancel.json#/$defs/result") == [])
        }
        for state in DeepLinkChangedNotification.State.allCases {
            let change = DeepLinkChangedNotification.Params(
                state: state, link: link, revision: 5, instance: InstanceID(7),
                error: ResponseError(.rejectedByGuard, "no"), replacedBy: "switchyard://todos")
            #expect(
                try validator.validate(try Coding.encode(change), against: "deepLink.changed.json#/$defs/params") == [])
        }
        // A condition names one of root or tab, never both, never neither.
        #expect(try validator.validate(["root": "a", "tab": "b"], against: "common.json#/$defs/DeferCondition") != [])
        #expect(try validator.validate(["instance": 1], against: "common.json#/$defs/DeferCondition") != [])
        #expect(throws: (any Error).self) { try Coding.decode(DeferCondition.self, from: ["root": "a", "tab": "b"]) }
        #expect(try Coding.decode(DeferCondition.self, from: ["tab": "inbox"]) == .tab("inbox"))
    }
}
