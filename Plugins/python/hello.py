#!/usr/bin/env python3
"""The smallest Python plugin: one stack coordinator type with a root screen and a route with a param.

`switchyard` next to these files is a link to the SDK in Protocol/sdk/python, so the bundled plugins run from a plain
checkout; a plugin of your own imports the installed package (`pip install ./Protocol/sdk/python`)."""
import switchyard
from switchyard import screen

plugin = switchyard.Plugin("hello-python", "1.0.0")


@plugin.coordinator
class Hello(switchyard.Coordinator):
    type_name = "hello"
    initial = "greeting"
    routes = [
        switchyard.root("greeting"),
        switchyard.push("details", deep_link="details/:id", params=["id"]),
    ]

    def greeting(self, params, link):
        return screen("Greeting")

    def details(self, params, link):
        return screen("Details", id=params.get("id"))


if __name__ == "__main__":
    plugin.run()
