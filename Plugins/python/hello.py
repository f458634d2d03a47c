#!/usr/bin/env python3
"""The smallest Python plugin: one stack coordinator type with a root screen.

`switchyard` next to these files is a link to the SDK in Protocol/sdk/python, so the bundled plugins run from a plain
checkout; a plugin of your own imports the installed package (`pip install ./Protocol/sdk/python`)."""
import switchyard

plugin = switchyard.Plugin("hello-python", "1.0.0", [
    {"type": "hello", "kind": "stack", "initialRoute": "greeting", "routes": [
        {"name": "greeting", "transition": "root"},
        {"name": "details", "transition": "push", "deepLink": "details/:id",
         "params": [{"name": "id", "type": "string"}]},
    ]},
])

if __name__ == "__main__":
    plugin.run()
