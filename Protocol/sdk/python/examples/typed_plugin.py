#!/usr/bin/env python3
"""A typed plugin: async route methods backed by an asynchronous store, a guard, an action, a custom deep-link
resolver. `mypy --strict` checks it with the SDK (Protocol/sdk/python/pyproject.toml); the tests also run it through
the host, so the hints and the runtime cannot drift apart."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Dict, List, Optional

import switchyard
from switchyard import Content, DeepLinkResolution, ErrorCode, Link, Params, RPCError, Step, reject, screen, ui


@dataclass
class Order:
    id: int
    title: str


class Store:
    """Stands for a database or a web service: everything it does is asynchronous."""

    def __init__(self) -> None:
        self.orders: Dict[int, Order] = {1: Order(1, "Tea"), 2: Order(2, "Cake")}

    async def find(self, order_id: int) -> Optional[Order]:
        await asyncio.sleep(0)
        return self.orders.get(order_id)


store = Store()
plugin = switchyard.Plugin("orders", "0.1.0")


@plugin.coordinator
class Orders(switchyard.Coordinator):
    type_name = "orders"
    initial = "list"
    custom_deep_links = True
    routes = [
        # The list's rows open an order: a tap sends `open` with its id, and action() decides (spec §12.6, §21).
        switchyard.root("list", actions=[{"name": "open", "params": [{"name": "id", "type": "integer"}]}]),
        switchyard.push("order", params=[{"name": "id", "type": "integer"}], actions=["close"]),
        switchyard.modal("help", presentation={"detents": ["medium"]}),
    ]

    @classmethod
    async def handle_deep_link(cls, segments: List[str], query: Dict[str, str]) -> DeepLinkResolution:
        """`order/7` opens order 7; anything else is not a link into this type."""
        if len(segments) < 2 or segments[0] != "order" or not segments[1].isdigit():
            raise RPCError(ErrorCode.DEEP_LINK_INVALID, "not an order link", {"segment": segments[0] if segments else None})
        return "order", {"id": int(segments[1])}, 2

    def list(self, params: Params, link: Optional[Link]) -> Content:
        rows = [ui.row(order.title, detail="#%d" % order.id, action=ui.action("open", {"id": order.id}))
                for order in store.orders.values()]
        return ui.screen("OrderList", title="Orders", content=[ui.list(*rows)],
                         props={"customer": (self.params or {}).get("customer", "anyone")})

    async def order(self, params: Params, link: Optional[Link]) -> Content:
        order = await store.find(params["id"])
        if order is None:
            raise reject("there is no order %d" % params["id"])  # a guard: rejectedByGuard, nothing changes
        return screen("Order", id=order.id, title=order.title, via=(link or {}).get("url"))

    def help(self, params: Params, link: Optional[Link]) -> Content:
        return screen("Help")

    async def action(self, name: str, params: Optional[Params], route: str, entry: int) -> Optional[List[Step]]:
        if name == "open":
            return [{"op": "route", "route": "order", "params": {"id": (params or {}).get("id")}}]
        if name != "close":
            raise RPCError(ErrorCode.NOT_ALLOWED, "order has no action '%s'" % name, {"action": name})
        return [{"op": "popLast"}]


if __name__ == "__main__":
    plugin.run()
