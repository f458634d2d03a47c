import DemoTodosPlugin
import SwitchyardPlugin

todosPlugin.run()
