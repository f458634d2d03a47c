import DemoAuthenticatedPlugin
import SwitchyardPlugin

authenticatedPlugin.run()
