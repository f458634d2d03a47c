// The smallest Swift plugin: one stack coordinator type with a root screen, served by the SDK runtime.
import SwitchyardPlugin
import SwitchyardProtocol

PluginRuntime.run {
    let runtime = PluginRuntime(configuration: .init(
        info: PluginInfo(name: "hello-swift", version: "1.0.0"),
        coordinators: [
            CoordinatorDeclaration(type: "hello", kind: .stack, initialRoute: "greeting", routes: [
                RouteDeclaration(name: "greeting", transition: .root),
                RouteDeclaration(name: "details", transition: .push, deepLink: "details/:id",
                    params: [ParamDeclaration(name: "id", type: .string)]),
            ])
        ]))
    return runtime
}
