@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// One pair of contracts per rule of §19.3: the old version's types and the new one's, which differ by exactly the
/// change the rule names.
struct RulePair: CustomTestStringConvertible, Sendable {
    let rule: ContractRule
    let old: String
    let new: String
    var protocolVersions = (1, 1)

    var testDescription: String { rule.rawValue }

    /// A stack type `a` with a `home` root and the routes given (JSON members of `routes`).
    static func stack(_ routes: String = "", initial: String = "home", extra: String = "") -> String {
        #"{"a": {"kind": "stack", "initialRoute": "\#(initial)", "routes": {"home": {"transition": "root"}\#(routes.isEmpty ? "" : ", " + routes)}\#(extra)}}"#
    }

    /// A tabs type `a` with these tabs, in this order.
    static func tabs(_ names: [String]) -> String {
        let routes = names.map { #""\#($0)": {"transition": "tab"}"# }.joined(separator: ", ")
        return
            #"{"a": {"kind": "tabs", "routes": {\#(routes)}, "tabs": [\#(names.map { "\"\($0)\"" }.joined(separator: ", "))]}}"#
    }

    static let item =
        #""item": {"transition": "push", "deepLink": "item/:id", "params": {"id": {"type": "string", "required": true}}}"#
}

/// A contract of plugin `name` with these types (JSON), through the reader a contract file goes through.
func contract(_ types: String, name: String = "todos", protocolVersion: Int = 1) throws -> RouteContract {
    let text =
        #"{"contractVersion": 1, "plugin": {"name": "\#(name)", "version": "1.0.0"}, "protocolVersion": \#(protocolVersion), "types": \#(types)}"#
    return try RouteContract(parsing: Array(text.utf8))
}

@Suite("Contract rules (§19.3)", .timeLimit(.minutes(1)))
struct ContractRuleTests {
    static let pairs: [RulePair] = [
        // Breaking, each beside the compatible change closest to it below.
        RulePair(rule: .protocolVersionChanged, old: RulePair.stack(), new: RulePair.stack(), protocolVersions: (1, 2)),
        RulePair(
            rule: .typeRemoved,
            old:
                #"{"a": {"kind": "wrapper", "routes": {"c": {"transition": "child", "target": {"type": "b"}}}}, "b": {"kind": "stack", "initialRoute": "r", "routes": {"r": {"transition": "root"}}}}"#,
            new: #"{"a": {"kind": "wrapper", "routes": {"c": {"transition": "child", "target": {"type": "b"}}}}}"#),
        RulePair(
            rule: .typeKindChanged, old: RulePair.stack(),
            new: #"{"a": {"kind": "wrapper", "routes": {"home": {"transition": "child"}}}}"#),
        RulePair(rule: .routeRemoved, old: RulePair.stack(RulePair.item), new: RulePair.stack()),
        RulePair(rule: .tabRemoved, old: RulePair.tabs(["browse", "about"]), new: RulePair.tabs(["browse"])),
        RulePair(
            rule: .routeTransitionChanged, old: RulePair.stack(#""item": {"transition": "push"}"#),
            new: RulePair.stack(#""item": {"transition": "modal"}"#)),
        RulePair(
            rule: .routeTransitionsNarrowed,
            old: RulePair.stack(#""item": {"transition": "push", "transitions": ["modal"]}"#),
            new: RulePair.stack(#""item": {"transition": "push"}"#)),
        RulePair(
            rule: .routeTargetChanged, old: RulePair.stack(#""item": {"transition": "push"}"#),
            new: RulePair.stack(#""item": {"transition": "push", "target": {"plugin": "projects", "type": "project"}}"#)
        ),
        RulePair(
            rule: .deepLinkRemoved, old: RulePair.stack(RulePair.item),
            new: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": true}}}"#)),
        RulePair(
            rule: .deepLinkNarrowed, old: RulePair.stack(#""files": {"transition": "push", "deepLink": "files/**"}"#),
            new: RulePair.stack(#""files": {"transition": "push", "deepLink": "files/*"}"#)),
        RulePair(
            rule: .customDeepLinksRemoved, old: RulePair.stack(extra: #", "customDeepLinks": true"#),
            new: RulePair.stack()),
        RulePair(
            rule: .actionRemoved, old: RulePair.stack(#""item": {"transition": "push", "actions": {"complete": {}}}"#),
            new: RulePair.stack(#""item": {"transition": "push"}"#)),
        RulePair(
            rule: .paramsDeclared, old: RulePair.stack(#""item": {"transition": "push"}"#),
            new: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": false}}}"#)),
        RulePair(
            rule: .paramRequiredAdded, old: RulePair.stack(#""item": {"transition": "push", "params": {}}"#),
            new: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": true}}}"#)),
        RulePair(
            rule: .paramRemoved,
            old: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": false}}}"#),
            new: RulePair.stack(#""item": {"transition": "push", "params": {}}"#)),
        RulePair(
            rule: .paramTypeChanged, old: RulePair.stack(RulePair.item),
            new: RulePair.stack(
                #""item": {"transition": "push", "deepLink": "item/:id", "params": {"id": {"type": "integer", "required": true}}}"#
            )),
        RulePair(
            rule: .paramMadeRequired,
            old: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": false}}}"#),
            new: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": true}}}"#)),
        // Compatible.
        RulePair(
            rule: .typeAdded, old: RulePair.stack(),
            new:
                #"{"a": {"kind": "stack", "initialRoute": "home", "routes": {"home": {"transition": "root"}}}, "b": {"kind": "wrapper", "routes": {"c": {"transition": "child", "target": {"type": "a"}}}}}"#
        ),
        RulePair(rule: .routeAdded, old: RulePair.stack(), new: RulePair.stack(RulePair.item)),
        RulePair(rule: .tabAdded, old: RulePair.tabs(["browse"]), new: RulePair.tabs(["browse", "about"])),
        RulePair(
            rule: .tabsReordered, old: RulePair.tabs(["browse", "about"]), new: RulePair.tabs(["about", "browse"])),
        RulePair(
            rule: .initialRouteChanged, old: RulePair.stack(#""guest": {"transition": "root"}"#),
            new: RulePair.stack(#""guest": {"transition": "root"}"#, initial: "guest")),
        RulePair(
            rule: .routeTransitionsWidened, old: RulePair.stack(#""item": {"transition": "push"}"#),
            new: RulePair.stack(#""item": {"transition": "push", "transitions": ["fullScreen", "modal"]}"#)),
        RulePair(
            rule: .deepLinkAdded,
            old: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": true}}}"#),
            new: RulePair.stack(RulePair.item)),
        RulePair(
            rule: .deepLinkWidened, old: RulePair.stack(#""files": {"transition": "push", "deepLink": "files/*"}"#),
            new: RulePair.stack(#""files": {"transition": "push", "deepLink": "files/**"}"#)),
        RulePair(
            rule: .deepLinkRewritten, old: RulePair.stack(RulePair.item),
            new: RulePair.stack(
                #""item": {"transition": "push", "deepLink": "item/{id}", "params": {"id": {"type": "string", "required": true}}}"#
            )),
        RulePair(
            rule: .customDeepLinksAdded, old: RulePair.stack(),
            new: RulePair.stack(extra: #", "customDeepLinks": true"#)),
        RulePair(
            rule: .actionAdded, old: RulePair.stack(#""item": {"transition": "push"}"#),
            new: RulePair.stack(
                #""item": {"transition": "push", "actions": {"complete": {"params": {"id": {"type": "string", "required": false}}}}}"#
            )),
        RulePair(
            rule: .paramsUndeclared,
            old: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": false}}}"#),
            new: RulePair.stack(#""item": {"transition": "push"}"#)),
        RulePair(
            rule: .paramOptionalAdded, old: RulePair.stack(#""item": {"transition": "push", "params": {}}"#),
            new: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": false}}}"#)),
        RulePair(
            rule: .paramMadeOptional,
            old: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": true}}}"#),
            new: RulePair.stack(
                #""item": {"transition": "push", "params": {"id": {"type": "string", "required": false}}}"#)),
        RulePair(
            rule: .paramTypeWidened,
            old: RulePair.stack(
                #""item": {"transition": "push", "params": {"n": {"type": "integer", "required": true}}}"#),
            new: RulePair.stack(
                #""item": {"transition": "push", "params": {"n": {"type": "number", "required": true}}}"#)),
        RulePair(
            rule: .targetParamsChanged,
            old: RulePair.stack(
                #""p": {"transition": "push", "target": {"plugin": "projects", "type": "project"}, "targetParams": {"id": {"type": "string", "required": true}}}"#
            ),
            new: RulePair.stack(
                #""p": {"transition": "push", "target": {"plugin": "projects", "type": "project"}, "targetParams": {"id": {"type": "string", "required": true}, "tab": {"type": "string", "required": false}}}"#
            )),
    ]

    @Test(
        "each pair differs by exactly the change its rule names, breaking or compatible as the rule says",
        arguments: pairs)
    func pair(_ pair: RulePair) throws {
        let old = try contract(pair.old, protocolVersion: pair.protocolVersions.0)
        let new = try contract(pair.new, protocolVersion: pair.protocolVersions.1)
        let findings = ContractComparison.diff(old, new)
        #expect(findings.map(\.rule) == [pair.rule], "\(findings)")
        #expect(findings.allSatisfy { $0.isBreaking == pair.rule.isBreaking })
        // A contract compared with itself has no finding, whichever side of the pair.
        #expect(ContractComparison.diff(old, old).isEmpty && ContractComparison.diff(new, new).isEmpty)
    }

    @Test("every rule has a pair here, except the reference rules (ReferenceRuleTests)")
    func everyRuleHasAPair() {
        let covered = Set(Self.pairs.map(\.rule)).union([.referenceUnresolved, .referenceIncompatible])
        #expect(
            Set(ContractRule.allCases).subtracting(covered).isEmpty,
            "no pair for \(Set(ContractRule.allCases).subtracting(covered))")
        #expect(Self.pairs.count == Set(Self.pairs.map(\.rule)).count)
    }

    @Test("findings point where the change is: the old document for what was removed, the new one for the rest")
    func pointers() throws {
        let old = try contract(RulePair.stack(RulePair.item))
        let new = try contract(
            RulePair.stack(
                #""item": {"transition": "push", "deepLink": "item/:id", "params": {"id": {"type": "integer", "required": true}}, "actions": {"open": {}}}, "other": {"transition": "modal"}"#
            ))
        let findings = ContractComparison.diff(old, new)
        #expect(
            findings.map { "\($0.rule) \($0.side) \($0.pointer)" } == [
                "ACTION_ADDED new /types/a/routes/item/actions/open",
                "PARAM_TYPE_CHANGED new /types/a/routes/item/params/id/type",
                "ROUTE_ADDED new /types/a/routes/other",
            ])
        let removed = ContractComparison.diff(new, old)
        #expect(
            removed.first { $0.rule == .routeRemoved }.map { "\($0.side) \($0.pointer)" } == "old /types/a/routes/other"
        )
        #expect(removed.first { $0.rule == .actionRemoved }?.pointer.description == "/types/a/routes/item/actions/open")
    }

    @Test(
        "deep-link coverage: a pattern covers another when it matches every segment sequence the other consumes",
        arguments: [
            ("item/:id", "item/:id", true), ("item/:id", "item/42", true), ("item/42", "item/:id", false),
            ("*", ":x", true),
            ("item/**", "item/:id", true), ("item/**", "item/a/b/**", true), ("item/:id", "item/**", false),
            ("**", "", false),
            ("", "", true), ("a/*", "a", false), ("a", "a/*", false), ("a/**", "a", false), ("a/b/**", "a/**", false),
            ("x/**", "y/**", false),
        ])
    func coverage(_ wide: String, _ narrow: String, _ covers: Bool) throws {
        #expect(ContractComparison.covers(try PathPattern(parsing: wide), try PathPattern(parsing: narrow)) == covers)
    }
}

@Suite("Contract references (§19.3)", .timeLimit(.minutes(1)))
struct ReferenceRuleTests {
    /// `todos`'s route `project` opens `projects.project`, passing an `id`.
    static let consumer = RulePair.stack(
        #""project": {"transition": "push", "target": {"plugin": "projects", "type": "project"}, "targetParams": {"id": {"type": "string", "required": true}}}"#
    )
    static func provider(
        _ params: String = #"{"id": {"type": "string", "required": true}}"#, type: String = "project"
    ) -> String {
        #"{"\#(type)": {"kind": "stack", "initialRoute": "overview", "params": \#(params), "routes": {"overview": {"transition": "root"}}}}"#
    }

    @Test(
        "a type the other module no longer has is REFERENCE_UNRESOLVED; in the provider's diff it is also TYPE_REMOVED")
    func unresolved() throws {
        let consumer = try contract(Self.consumer, name: "todos")
        let old = try contract(Self.provider(), name: "projects")
        let new = try contract(Self.provider(type: "projectDetail"), name: "projects")
        #expect(ContractComparison.references(of: old, among: [consumer]).isEmpty)
        let findings = ContractComparison.references(of: new, among: [consumer])
        #expect(
            findings.map { "\($0.rule) \($0.side) \($0.pointer)" } == [
                "REFERENCE_UNRESOLVED module(\"todos\") /types/a/routes/project"
            ])
        #expect(findings.first?.message.contains("module 'todos', type 'a', route 'project'") == true)
        #expect(ContractComparison.diff(old, new).map(\.rule) == [.typeRemoved, .typeAdded])
        // The consumer's own CI sees the same break from its side, with the provider's published contract.
        #expect(
            ContractComparison.references(of: consumer, among: [new]).map { "\($0.rule) \($0.side)" } == [
                "REFERENCE_UNRESOLVED new"
            ])
    }

    @Test(
        "params the route passes that the type no longer takes, or a kind it cannot push, are REFERENCE_INCOMPATIBLE naming the param",
        arguments: [
            (Self.provider(#"{"id": {"type": "integer", "required": true}}"#), "id"),
            (
                Self.provider(
                    #"{"id": {"type": "string", "required": true}, "owner": {"type": "string", "required": true}}"#),
                "owner"
            ),
            (Self.provider(#"{}"#), "id"),
            (
                #"{"project": {"kind": "tabs", "params": {"id": {"type": "string", "required": true}}, "routes": {"overview": {"transition": "tab"}}, "tabs": ["overview"]}}"#,
                nil
            ),
        ] as [(String, String?)])
    func incompatible(_ provider: String, _ param: String?) throws {
        let findings = ContractComparison.references(
            of: try contract(provider, name: "projects"), among: [try contract(Self.consumer, name: "todos")])
        #expect(findings.map(\.rule) == [.referenceIncompatible], "\(findings)")
        #expect(
            findings.first?.pointer.description == "/types/a/routes/project"
                + (param.map { "/targetParams/\($0)" } ?? ""))
    }

    @Test("references into a module whose contract is not given are not judged")
    func unknownModule() throws {
        #expect(ContractComparison.references(of: try contract(Self.consumer, name: "todos"), among: []).isEmpty)
    }
}
