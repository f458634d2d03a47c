#!/usr/bin/env python3
"""A plugin whose route methods are `async def`, for the tests of what the SDK does with them through the host.

- `item/:id` awaits (an asyncio sleep stands for a database) before it answers; its guard refuses id 0 after the
  await, so the refusal arrives from the event loop.
- `checkout` answers at once and starts a task that awaits a `navigate` of its own (sent after the answer) and logs
  the revision it produced.
- `broken` raises a KeyError after an await: internalError with the traceback in `error.data`.
- `score` answers a screen with NaN in its props: JSON cannot carry it, so the answer is internalError naming the
  field, never an invalid line.
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402
from switchyard import reject, screen  # noqa: E402

plugin = switchyard.Plugin("shop", "1.0.0")
PRICES = {1: "tea", 2: "cake"}


@plugin.coordinator
class Shop(switchyard.Coordinator):
    type_name = "shop"
    initial = "home"
    routes = [
        switchyard.root("home"),
        switchyard.push("item", deep_link="item/:id", params=[{"name": "id", "type": "integer"}]),
        switchyard.push("checkout", deep_link="checkout"),
        switchyard.push("broken", deep_link="broken"),
        switchyard.push("score", deep_link="score"),
    ]

    async def home(self, params, link):
        await asyncio.sleep(0)
        return screen("Shop")

    async def item(self, params, link):
        await asyncio.sleep(0.01)
        if params["id"] not in PRICES:
            raise reject("there is no item %d" % params["id"])
        return screen("Item", name=PRICES[params["id"]])

    async def checkout(self, params, link):
        # Not awaited here: the navigate is sent after this answer, so this handler must answer first.
        self.leaving = asyncio.create_task(self.leave())
        return screen("Checkout")

    async def leave(self):
        result = await self.navigate([{"op": "popLast"}])
        sys.stderr.write("shop: left the checkout, revision %d\n" % result["revision"])

    async def broken(self, params, link):
        await asyncio.sleep(0)
        return screen("Broken", name=PRICES[99])

    def score(self, params, link):
        return screen("Score", value=float("nan"))


if __name__ == "__main__":
    plugin.run()
