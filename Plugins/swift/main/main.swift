import DemoMainPlugin
import SwitchyardPlugin

mainPlugin.run()
