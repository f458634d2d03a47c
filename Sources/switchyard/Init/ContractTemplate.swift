import SwitchyardNavigation
import SwitchyardProtocol

/// The route contract `init plugin` commits beside the plugin (Protocol/README.md §19), and the CI that keeps it
/// honest: a shell script that exports the contract and diffs it against the last release's, and a GitHub Actions
/// workflow that runs it.
extension PluginTemplate {
    var contractPath: String { "contracts/\(names.plugin).json" }

    /// The contract as the generated code declares it, and its CI.
    func contractFiles(for language: PluginLanguage) -> [GeneratedFile] {
        let contract = RouteContract(
            plugin: PluginInfo(name: names.plugin, version: "0.1.0"), protocolVersion: ProtocolVersion.current,
            coordinators: routeTable(for: language))
        return [
            GeneratedFile(path: contractPath, text: String(decoding: contract.encoded(), as: UTF8.self)),
            GeneratedFile(path: "ci/contract-check.sh", text: contractScript, isExecutable: true),
            GeneratedFile(path: ".github/workflows/contract.yml", text: workflow(for: language)),
        ]
    }

    /// The route table the generated code declares, as its SDK writes it: the Swift SDK declares a factory without
    /// input as taking no params (`[]`) and starts a tab bar on its first tab; Python and Node leave both out.
    func routeTable(for language: PluginLanguage) -> [CoordinatorDeclaration] {
        let none: [ParamDeclaration]? = language == .swift ? [] : nil
        var table = [
            CoordinatorDeclaration(
                type: names.type, kind: .stack, initialRoute: "home",
                routes: [
                    RouteDeclaration(name: "home", transition: .root, params: none),
                    RouteDeclaration(
                        name: "item", transition: .push, deepLink: "item/:id",
                        params: [ParamDeclaration(name: "id", type: .integer)]),
                    RouteDeclaration(name: "settings", transition: .modal, deepLink: "settings", params: none),
                ])
        ]
        switch kind {
        case .stack: break
        case .tabs:
            table.append(
                CoordinatorDeclaration(
                    type: rootType, kind: .tabs, initialRoute: language == .swift ? "browse" : nil,
                    routes: [
                        RouteDeclaration(
                            name: "browse", transition: .tab, deepLink: "browse", params: none,
                            target: CoordinatorReference(type: names.type)),
                        RouteDeclaration(name: "about", transition: .tab, deepLink: "about", params: none),
                    ]))
        case .wrapper:
            table.append(
                CoordinatorDeclaration(
                    type: rootType, kind: .wrapper,
                    routes: [
                        RouteDeclaration(
                            name: "content", transition: .child, params: none,
                            target: CoordinatorReference(type: names.type))
                    ]))
        }
        return table
    }

    /// Exports the contract, fails if the committed one is stale, then diffs it against the one at the last release tag.
    var contractScript: String {
        let export = "contract export --manifest switchyard.json --manifest-entry \(names.plugin)"
        return #"""
            #!/bin/sh
            # The \#(names.plugin) plugin's route contract (what it promises the modules it is composed with; Switchyard's
            # Protocol/README.md §19), checked as its CI runs it:
            #   1. \#(contractPath) is the contract the plugin declares now (else: export it again and commit it);
            #   2. nothing in it breaks what the last release promised: it is diffed against \#(contractPath) at the
            #      newest git tag, or against itself while no tag has it (the first release).
            # Needs the switchyard CLI on the PATH (or in $SWITCHYARD) and the plugin runnable as switchyard.json starts it.
            # A breaking change made on purpose: CONTRACT_ALLOW="ROUTE_REMOVED PARAM_REMOVED" ci/contract-check.sh
            # (`switchyard contract rules` lists the rules).
            set -eu
            cd "$(dirname "$0")/.."
            switchyard=${SWITCHYARD:-switchyard}
            contract=\#(contractPath)
            work=$(mktemp -d)
            trap 'rm -rf "$work"' EXIT

            "$switchyard" \#(export) --output "$work/current.json"
            if ! cmp -s "$work/current.json" "$contract"; then
                echo "error: $contract is not the contract the plugin declares now; export it and commit it:" >&2
                echo "  switchyard \#(export) --output $contract" >&2
                diff -u "$contract" "$work/current.json" >&2 || true
                exit 1
            fi

            tag=$(git describe --tags --abbrev=0 2>/dev/null || true)
            baseline="$work/\#(names.plugin)@${tag:-none}.json"
            if [ -n "$tag" ] && git show "$tag:./$contract" > "$baseline" 2>/dev/null; then
                echo "baseline: $contract at $tag"
            else
                echo "baseline: $contract as committed (no release tag has it yet)"
                cp "$contract" "$baseline"
            fi

            allow=""
            for rule in ${CONTRACT_ALLOW:-}; do allow="$allow --allow $rule"; done
            # $allow is split into words on purpose.
            "$switchyard" contract diff "$baseline" "$contract" $allow

            """#
    }

    /// A GitHub Actions job that builds the switchyard CLI, makes the plugin runnable and runs the script.
    func workflow(for language: PluginLanguage) -> String {
        let (checkout, repository, ref): (String, String, String)
        switch sdk {
        case .checkout(let path):
            (checkout, repository, ref) = (
                path, "https://github.com/OWNER/switchyard.git  # your Switchyard repository", "0.1.0"
            )
        case .released(let url, let version): (checkout, repository, ref) = ("/tmp/switchyard", url, version)
        }
        let plugin: String
        switch language {
        case .swift: plugin = "swift build"
        case .python:
            plugin = """
                python3 -m venv .venv && .venv/bin/pip install "$SWITCHYARD_CHECKOUT/Protocol/sdk/python"
                          echo "$PWD/.venv/bin" >> "$GITHUB_PATH"
                """
        case .node: plugin = "npm install --install-links"
        }
        let packages = ["swift": "", "python": " python3 python3-venv", "node": " nodejs npm"][language.rawValue] ?? ""
        return """
            # The \(names.plugin) plugin's route contract in CI (Switchyard's Protocol/README.md §19): ci/contract-check.sh
            # exports it, fails if the committed one is stale, and fails on a change that breaks the last release's.
            name: contract
            on: [push, pull_request]
            jobs:
              contract:
                runs-on: ubuntu-latest
                container: swift:6.2
                env:
                  # Where the plugin expects Switchyard (its SDK dependency), and where to get it from.
                  SWITCHYARD_CHECKOUT: \(checkout)
                  SWITCHYARD_REPOSITORY: \(repository)
                  SWITCHYARD_REF: "\(ref)"
                steps:
                  - uses: actions/checkout@v4
                    with:
                      fetch-depth: 0  # the tags: the contract at the last release is the baseline
                  - name: The switchyard CLI
                    run: |
                      apt-get update && apt-get install -y git libuv1-dev pkg-config\(packages)
                      git config --global --add safe.directory "$GITHUB_WORKSPACE"
                      git clone --depth 1 --branch "$SWITCHYARD_REF" "$SWITCHYARD_REPOSITORY" "$SWITCHYARD_CHECKOUT"
                      swift build --package-path "$SWITCHYARD_CHECKOUT" --product switchyard
                      echo "$SWITCHYARD_CHECKOUT/.build/debug" >> "$GITHUB_PATH"
                  - name: The plugin, runnable as switchyard.json starts it
                    run: |
                      \(plugin)
                  - name: The route contract
                    run: ci/contract-check.sh

            """
    }
}
