#!/usr/bin/env python3
"""The smallest Python plugin: one stack coordinator type with a root screen."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402

plugin = switchyard.Plugin("hello-python", "1.0.0", [
    {"type": "hello", "kind": "stack", "initialRoute": "greeting", "routes": [
        {"name": "greeting", "transition": "root"},
        {"name": "details", "transition": "push", "deepLink": "details/:id",
         "params": [{"name": "id", "type": "string"}]},
    ]},
])

if __name__ == "__main__":
    plugin.run()
