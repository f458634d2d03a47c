import Foundation
import SwitchyardSystem
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTestSupport
import SwitchyardSpec
import SwitchyardUV
import Testing

/// `switchyard contract export`, `diff` and `check` (Protocol/README.md §19) through the real CLI: the demo's
/// committed contracts are what its plugins declare, a breaking change fails naming rule, file and pointer, and a
/// composition is judged from contracts alone.
@Suite("switchyard contract", .heavy, .timeLimit(.minutes(3)))
struct ContractCLITests {
    static let demo = "Plugins/demo/switchyard.json"
    static let demoPlugins = ["main", "unauthenticated", "authenticated", "todos", "projects", "profile"]

    static func read(_ path: String) throws -> String { String(decoding: try FileSystem.readFile(path), as: UTF8.self) }

    /// A folder holding a copy of the demo's contracts (`contracts/NAME.json`), each changed by `edit` if it has an
    /// entry, and a manifest whose plugins would leave `started` behind if anything started them.
    static func app(edits: [String: (inout JSONValue) -> Void] = [:]) throws -> (manifest: String, started: String) {
        let directory = try TestSweep.temporaryDirectory()
        try FileSystem.makeDirectory(directory + "/contracts", mode: 0o755)
        for plugin in demoPlugins {
            var contract = try JSONParser.parse(
                try FileSystem.readFile("\(packageRoot)/Plugins/demo/contracts/\(plugin).json"))
            edits[plugin]?(&contract)
            set(&contract, ["references"], nil)
            // Written as `contract export` would write it, so the derived references stay true to the routes.
            let bytes = try RouteContract(parsing: JSONWriter.encode(contract)).encoded()
            try FileSystem.writeFileAtomically("\(directory)/contracts/\(plugin).json", bytes, mode: 0o644)
        }
        let started = directory + "/started"
        let entries = demoPlugins.map {
            #"{"name": "\#($0)", "command": ["/bin/sh", "-c", "echo \#($0) >> \#(started); sleep 60"]}"#
        }
        let manifest = """
            {
              "app": "contracts-test",
              "root": {"plugin": "main", "type": "main"},
              "plugins": [
                \(entries.joined(separator: ",\n    "))
              ]
            }
            """
        try FileSystem.writeFileAtomically(directory + "/switchyard.json", Array(manifest.utf8), mode: 0o644)
        return (directory + "/switchyard.json", started)
    }

    /// Sets `value` at `path` (object keys) inside `json`.
    static func set(_ json: inout JSONValue, _ path: [String], _ value: JSONValue?) {
        guard let key = path.first, case .object(var object) = json else { return }
        if path.count == 1 {
            object[key] = value
        } else {
            var member = object[key] ?? .object(JSONObject())
            set(&member, Array(path.dropFirst()), value)
            object[key] = member
        }
        json = .object(object)
    }

    @Test(
        "the demo's committed contracts are what its plugins declare now, byte for byte, and valid against the schema",
        arguments: demoPlugins)
    func demoContractsAreCurrent(_ plugin: String) async throws {
        let result = try await CLITests.run(["contract", "export", "--manifest", Self.demo, "--manifest-entry", plugin])
        #expect(result.status == 0, "\(result.stderr.joined(separator: "\n"))")
        let committed = try Self.read("\(packageRoot)/Plugins/demo/contracts/\(plugin).json")
        #expect(
            result.stdout.joined(separator: "\n") + "\n" == committed,
            "Plugins/demo/contracts/\(plugin).json is stale: run `swift run switchyard contract export --manifest \(Self.demo) --manifest-entry \(plugin) --output Plugins/demo/contracts/\(plugin).json`"
        )
        let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")
        let errors = try validator.validate(try JSONParser.parse(committed), against: "contract.schema.json")
        #expect(errors == [], "\(errors)")
    }

    @Test(
        "export --output writes the file atomically and says what it holds; a plugin that cannot start is refused with its stderr"
    )
    func exportToFile() async throws {
        let output = try TestSweep.temporaryDirectory() + "/profile.json"
        let result = try await CLITests.run([
            "contract", "export", "--output", output, "--", TestPlugins.python, "Plugins/python/profile.py",
        ])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.contains {
                $0.contains("wrote \(output): plugin 'profile' 1.0.0, 1 type, 4 routes, 2 deep links, 7 actions")
            })
        #expect(try Self.read(output) == (try Self.read("\(packageRoot)/Plugins/demo/contracts/profile.json")))

        let failing = try await CLITests.run([
            "contract", "export", "--", TestPlugins.python, "-c",
            "import sys; sys.stderr.write('boom\\n'); sys.exit(3)",
        ])
        #expect(failing.status == 1)
        #expect(failing.stderr.contains { $0.contains("did not complete the handshake") }, "\(failing.stderr)")
        #expect(failing.stderr.contains { $0.contains("boom") })
    }

    @Test("the Python SDK declares a type's creation_params and a route's target_params; the contract records both")
    func pythonSDKDeclaresParams() async throws {
        let plugin = """
            import sys; sys.path.insert(0, "Plugins/python")
            import switchyard
            from switchyard import screen, coordinator
            plugin = switchyard.Plugin("links", "1.0.0")
            @plugin.coordinator
            class Project(switchyard.Coordinator):
                type_name = "project"
                initial = "overview"
                creation_params = [{"name": "id", "type": "integer"}]
                routes = [switchyard.root("overview"), switchyard.push("other", target="project", target_params=[{"name": "id", "type": "integer"}])]
                def overview(self, params, link): return screen("Project")
                def other(self, params, link): return coordinator("project", params={"id": 2})
            plugin.run()
            """
        let result = try await CLITests.run(["contract", "export", "--", TestPlugins.python, "-c", plugin])
        #expect(result.status == 0, "\(result.stderr)")
        let contract = try RouteContract(parsing: Array((result.stdout.joined(separator: "\n") + "\n").utf8))
        #expect(contract.types["project"]?.params == ["id": ContractParam(type: .integer)])
        #expect(contract.types["project"]?.routes["other"]?.targetParams == ["id": ContractParam(type: .integer)])
    }

    @Test("contract check accepts the demo from its committed contracts")
    func checkAcceptsTheDemo() async throws {
        let result = try await CLITests.run(["contract", "check", "--manifest", Self.demo])
        #expect(result.status == 0, "\((result.stdout + result.stderr).joined(separator: "\n"))")
        #expect(
            result.stdout.last?.hasPrefix("contract check: 6 modules compose (main 1.0.0, unauthenticated 1.0.0")
                == true, "\(result.stdout)")
    }

    @Test(
        "contract check refuses a composition whose references break, naming module, type, route and param, and starts nothing"
    )
    func checkRefusesBrokenReferences() async throws {
        // projects' `project` type now takes its `id` as an integer; both todos routes that open it pass a string (and
        // so does projects' own route: a table that no longer fits itself is left out too).
        let (manifest, started) = try Self.app(edits: [
            "projects": { Self.set(&$0, ["types", "project", "params", "id", "type"], "integer") }
        ])
        let result = try await CLITests.run(["contract", "check", "--manifest", manifest])
        #expect(result.status == 1)
        let directory = FileSystem.parentDirectory(of: manifest)
        let errors = result.stdout.filter { $0.contains(": error: ") }
        #expect(errors.count == 3, "\(result.stdout)")
        for (type, route) in [("share", "pickProject"), ("todos", "project")] {
            #expect(
                errors.contains { line in
                    line.hasPrefix("\(directory)/contracts/todos.json:")
                        && line.hasSuffix(
                            "error: plugin 'todos', type '\(type)', route '\(route)', param 'id': the route passes param 'id' as string, but projects.project takes it as integer"
                        )
                }, "\(errors)")
        }
        #expect(result.stdout.contains { $0.contains(#""id": {"#) }, "the excerpt shows the param in the contract")
        #expect(
            errors.contains {
                $0.hasPrefix("\(directory)/contracts/projects.json:")
                    && $0.contains("plugin 'projects', type 'projects', route 'project', param 'id'")
            })
        #expect(result.stdout.last == "contract check: 3 problems: the host would leave out todos, projects")
        #expect(!FileSystem.exists(started), "contract check started a plugin")

        // The type gone: every route that opens it is named.
        let (renamed, startedToo) = try Self.app(edits: [
            "projects": { json in
                let project = json["types"]?["project"]
                Self.set(&json, ["types", "project"], nil)
                Self.set(&json, ["types", "projectDetail"], project)
                Self.set(&json, ["types", "projects", "routes", "project", "target", "type"], "projectDetail")
            }
        ])
        let refused = try await CLITests.run(["contract", "check", "--manifest", renamed, "--json"])
        #expect(refused.status == 1)
        let report = try JSONParser.parse(refused.stdout.joined(separator: "\n"))
        let issues = report["issues"]?.arrayValue?.filter { $0["severity"] == "error" } ?? []
        #expect(
            issues.compactMap { issue in
                issue["route"]?.stringValue.map {
                    "\(issue["plugin"]?.stringValue ?? "").\(issue["type"]?.stringValue ?? "").\($0)"
                }
            }
            .sorted() == ["todos.share.pickProject", "todos.todos.project"], "\(issues)")
        #expect(issues.allSatisfy { $0["category"] == "unknownType" && $0["line"]?.intValue != nil })
        #expect(!FileSystem.exists(startedToo))
    }

    @Test("contract check: --contract names a file; a missing contract is status 66 with the command that exports it")
    func checkFindsContracts() async throws {
        let (manifest, _) = try Self.app()
        let directory = FileSystem.parentDirectory(of: manifest)
        try FileSystem.move(directory + "/contracts/profile.json", to: directory + "/profile-2.json")
        let missing = try await CLITests.run(["contract", "check", "--manifest", manifest])
        #expect(missing.status == 66)
        #expect(
            missing.stderr.first == "\(directory)/contracts/profile.json: error: no contract for plugin 'profile'",
            "\(missing.stderr)")
        #expect(
            missing.stderr.contains {
                $0.contains(
                    "switchyard contract export --manifest \(manifest) --manifest-entry profile --output \(directory)/contracts/profile.json"
                )
            })
        let given = try await CLITests.run([
            "contract", "check", "--manifest", manifest, "--contract", "profile=\(directory)/profile-2.json",
        ])
        #expect(given.status == 0, "\(given.stdout)")
        let unknown = try await CLITests.run([
            "contract", "check", "--manifest", manifest, "--contract", "billing=x.json",
        ])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains { $0.contains("the manifest has no plugin 'billing'") })
    }

    @Test(
        "a manifest entry's \"contract\" member names its file, relative to the manifest; an empty one is a manifest error at its place"
    )
    func manifestContractMember() async throws {
        let (manifest, _) = try Self.app()
        let directory = FileSystem.parentDirectory(of: manifest)
        try FileSystem.move(directory + "/contracts/profile.json", to: directory + "/profile-contract.json")
        var text = try Self.read(manifest)
        text = text.replacing(
            #"{"name": "profile", "command""#,
            with: #"{"name": "profile", "contract": "profile-contract.json", "command""#)
        try FileSystem.writeFileAtomically(manifest, Array(text.utf8), mode: 0o644)
        let result = try await CLITests.run(["contract", "check", "--manifest", manifest])
        #expect(result.status == 0, "\(result.stdout + result.stderr)")

        try FileSystem.writeFileAtomically(
            manifest, Array(text.replacing(#""contract": "profile-contract.json""#, with: #""contract": """#).utf8),
            mode: 0o644)
        let empty = try await CLITests.run(["contract", "check", "--manifest", manifest])
        #expect(empty.status == 65)
        #expect(
            empty.stderr.first?.hasPrefix("\(manifest):") == true
                && empty.stderr.first?.contains("error: plugin 'profile': 'contract' names a file") == true,
            "\(empty.stderr)")
    }

    @Test(
        "contract diff names the rule, the file, the line and column and the pointer; --allow accepts a rule, and only that one"
    )
    func diff() async throws {
        let (manifest, _) = try Self.app(edits: [
            "projects": { json in
                Self.set(&json, ["types", "project", "routes", "members"], nil)
                Self.set(&json, ["types", "projects", "routes", "project", "deepLink"], "p/:id")
                Self.set(&json, ["types", "project", "routes", "history"], ["transition": "push"])
            }
        ])
        let old = "\(packageRoot)/Plugins/demo/contracts/projects.json"
        let new = FileSystem.parentDirectory(of: manifest) + "/contracts/projects.json"
        let result = try await CLITests.run(["contract", "diff", old, new])
        #expect(result.status == 1)
        #expect(
            result.stdout.contains {
                $0.hasPrefix("\(old):")
                    && $0.contains(
                        ": error: [ROUTE_REMOVED] /types/project/routes/members: route 'members' of type 'project' was removed"
                    )
            },
            "\(result.stdout)")
        #expect(
            result.stdout.contains {
                $0.hasPrefix("\(new):")
                    && $0.contains(": error: [DEEP_LINK_NARROWED] /types/projects/routes/project/deepLink:")
            })
        #expect(
            result.stdout.contains {
                $0.hasPrefix("\(new):") && $0.contains(": note: [ROUTE_ADDED] /types/project/routes/history")
            })
        let located = try #require(result.stdout.first { $0.contains("[ROUTE_REMOVED]") })
        let members = try #require(
            Self.read(old).split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
                $0.contains(#""members": {"#)
            })
        #expect(located.hasPrefix("\(old):\(members + 1):9: error:"), "\(located)")
        #expect(result.stdout.last?.hasSuffix("2 breaking changes, 1 compatible; failed") == true)

        let one = try await CLITests.run(["contract", "diff", old, new, "--allow", "ROUTE_REMOVED"])
        #expect(one.status == 1, "the other breaking change still fails")
        #expect(
            one.stdout.contains {
                $0.contains("warning: [ROUTE_REMOVED]") && $0.hasSuffix("(allowed: --allow ROUTE_REMOVED)")
            })
        let both = try await CLITests.run([
            "contract", "diff", old, new, "--allow", "ROUTE_REMOVED", "--allow", "deep_link_narrowed",
        ])
        #expect(both.status == 0, "\(both.stdout)")
        #expect(both.stdout.last?.hasSuffix("2 breaking changes (2 allowed), 1 compatible") == true)

        let json = try await CLITests.run(["contract", "diff", old, new, "--json", "--allow", "ROUTE_REMOVED"])
        let report = try JSONParser.parse(json.stdout.joined(separator: "\n"))
        #expect(report["passed"] == false && report["summary"]?["allowed"] == 1)
        let removed = report["findings"]?.arrayValue?.first { $0["rule"] == "ROUTE_REMOVED" }
        #expect(
            removed?["file"]?.stringValue == old && removed?["pointer"] == "/types/project/routes/members"
                && removed?["allowed"] == true)
        #expect(removed?["line"]?.intValue == Int64(members + 1))

        let unknown = try await CLITests.run(["contract", "diff", old, new, "--allow", "ROUTE_RENAMED"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains { $0.contains("no rule 'ROUTE_RENAMED'") })
    }

    @Test("contract diff --against: a provider's removed type is a REFERENCE_UNRESOLVED in the consumer's contract")
    func diffAgainstConsumers() async throws {
        let (manifest, _) = try Self.app(edits: [
            "projects": { json in
                let project = json["types"]?["project"]
                Self.set(&json, ["types", "project"], nil)
                Self.set(&json, ["types", "projectDetail"], project)
                Self.set(&json, ["types", "projects", "routes", "project", "target", "type"], "projectDetail")
            }
        ])
        let directory = FileSystem.parentDirectory(of: manifest)
        let result = try await CLITests.run([
            "contract", "diff", "\(packageRoot)/Plugins/demo/contracts/projects.json",
            directory + "/contracts/projects.json",
            "--against", directory + "/contracts/todos.json",
        ])
        #expect(result.status == 1)
        for (type, route) in [("share", "pickProject"), ("todos", "project")] {
            #expect(
                result.stdout.contains {
                    $0.hasPrefix("\(directory)/contracts/todos.json:")
                        && $0.contains(
                            "error: [REFERENCE_UNRESOLVED] /types/\(type)/routes/\(route): module 'todos', type '\(type)', route '\(route)': targets type 'project', which plugin 'projects' does not declare"
                        )
                },
                "\(result.stdout)")
        }
    }

    @Test("a contract that is not one is status 65 at its line and column; a missing file is 66")
    func unreadable() async throws {
        let directory = try TestSweep.temporaryDirectory()
        try FileSystem.writeFileAtomically(
            directory + "/bad.json",
            Array(
                #"{"contractVersion": 1, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "types": {"a": {"kind": "stak", "routes": {}}}}"#
                    .utf8))
        let bad = try await CLITests.run([
            "contract", "diff", directory + "/bad.json", "\(packageRoot)/Plugins/demo/contracts/todos.json",
        ])
        #expect(bad.status == 65)
        #expect(
            bad.stderr.first
                == "\(directory)/bad.json:1:111: error: not a route contract (§19): /types/a/kind: 'stak' is not one of stack, tabs, wrapper",
            "\(bad.stderr)")
        let missing = try await CLITests.run(["contract", "diff", directory + "/none.json", directory + "/bad.json"])
        #expect(missing.status == 66)
        #expect(missing.stderr.first?.hasPrefix("\(directory)/none.json: error: no such file") == true)
    }

    @Test("check-plugin shows the contract it saw: a summary under the checks, the document in --json")
    func checkPluginShowsTheContract() async throws {
        let text = try await CLITests.run([
            "check-plugin", "--only", "handshake", "--", TestPlugins.python, "Plugins/python/profile.py",
        ])
        #expect(text.status == 0)
        #expect(text.stdout.contains { $0.hasPrefix("contract (what it promises the modules it is composed with") })
        #expect(text.stdout.contains("  1 type, 4 routes, 2 deep links, 7 actions; opens no other module's type"))
        #expect(text.stdout.contains("  type profile (stack, starts on overview)"))
        #expect(
            text.stdout.contains {
                $0.contains("settings") && $0.contains("push  link settings  actions save(theme?: string)")
            })
        let json = try await CLITests.run([
            "check-plugin", "--json", "--only", "handshake", "--", TestPlugins.python, "Plugins/python/profile.py",
        ])
        let report = try JSONParser.parse(json.stdout.joined(separator: "\n"))
        let committed = try RouteContract(
            parsing: try FileSystem.readFile("\(packageRoot)/Plugins/demo/contracts/profile.json"))
        #expect(report["contract"] == committed.json)
    }

    @Test("contract rules lists every rule with its class and meaning")
    func rules() async throws {
        let result = try await CLITests.run(["contract", "rules"])
        #expect(result.status == 0)
        #expect(result.stdout.count == ContractRule.allCases.count)
        #expect(
            result.stdout.contains {
                $0.hasPrefix("ROUTE_REMOVED ") && $0.contains("breaking") && $0.contains("routeNotFound")
            })
        #expect(result.stdout.contains { $0.hasPrefix("ROUTE_ADDED ") && $0.contains("compatible") })
    }
}

/// The spec and the code agree on the rules, and the README tells a module's CI what to run.
@Suite("Route contracts: spec and README", .timeLimit(.minutes(1)))
struct ContractDocumentationTests {
    @Test("§19.3 lists every rule, in the code's order, with its class and an example")
    func specListsEveryRule() throws {
        let spec = String(decoding: try FileSystem.readFile(packageRoot + "/Protocol/README.md"), as: UTF8.self)
        let section = try #require(spec.split(separator: "### 19.3").last?.split(separator: "### 19.4").first)
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { row in
            row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        #expect(rows.map { $0[0] } == ContractRule.allCases.map { "`\($0.rawValue)`" })
        #expect(rows.map { $0[1] } == ContractRule.allCases.map { $0.isBreaking ? "breaking" : "compatible" })
        #expect(rows.allSatisfy { $0.count == 4 && !$0[3].isEmpty }, "every rule has an example")
    }

    @Test("the README's section for a module's CI names export, diff, check and the generated script")
    func readmeSection() throws {
        let readme = String(decoding: try FileSystem.readFile(packageRoot + "/README.md"), as: UTF8.self)
        let section = try #require(
            readme.split(separator: "## Checking a module in its own CI").dropFirst().first?.split(separator: "\n## ")
                .first)
        for command in [
            "switchyard contract export --manifest switchyard.json --manifest-entry orders", "switchyard contract diff",
            "switchyard contract check --manifest",
            "ci/contract-check.sh", ".github/workflows/contract.yml", "--allow ROUTE_REMOVED",
        ] {
            #expect(section.contains(command), "\(command)")
        }
    }
}
