#!/usr/bin/env python3
"""A club whose offers are for members (spec §13.5): a guest's deep link to an offer is deferred by the guard until
the member root is active, with the join sheet shown meanwhile."""
import os
import sys
from typing import Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402
from switchyard import Content, Link, Params, reject, screen, until_root  # noqa: E402

plugin = switchyard.Plugin("club", "1.0.0")


@plugin.coordinator
class Club(switchyard.Coordinator):
    type_name = "club"
    initial = "guest"
    routes = [
        switchyard.root("guest"),
        switchyard.root("member"),
        switchyard.modal("join"),
        switchyard.push("offer", deep_link="offer/:id", params=[{"name": "id", "type": "integer"}]),
    ]
    is_member = False

    def guest(self, params: Params, link: Optional[Link]) -> Content:
        self.is_member = False
        return screen("Guest")

    def member(self, params: Params, link: Optional[Link]) -> Content:
        self.is_member = True
        return screen("Member")

    def join(self, params: Params, link: Optional[Link]) -> Content:
        return screen("Join")

    def offer(self, params: Params, link: Optional[Link]) -> Content:
        if not self.is_member:
            raise reject("members only", defer_until=until_root("member"), redirect=[{"op": "route", "route": "join"}])
        return screen("Offer", id=params["id"])


if __name__ == "__main__":
    plugin.run()
