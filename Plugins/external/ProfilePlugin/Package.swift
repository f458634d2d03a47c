// swift-tools-version: 6.2
// A feature module built on its own: a Switchyard plugin in a separate package that depends only on the SDK
// product. It replaces the demo app's Python profile plugin through a manifest (../switchyard.json).
//
//   swift build --package-path Plugins/external/ProfilePlugin
//   swift run switchyard run --manifest Plugins/external/switchyard.json
//
// A real feature team would depend on Switchyard by URL and version instead of by path.
import PackageDescription

let package = Package(
    name: "ProfilePlugin",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Switchyard", path: "../../..")
    ],
    targets: [
        .executableTarget(
            name: "profile-plugin",
            dependencies: [.product(name: "SwitchyardPlugin", package: "Switchyard")],
            path: "Sources/ProfilePlugin",
            swiftSettings: [.defaultIsolation(MainActor.self)]
        )
    ],
    swiftLanguageModes: [.v6]
)
