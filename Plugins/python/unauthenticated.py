#!/usr/bin/env python3
"""The unauthenticated flow (Stinsen README's UnauthenticatedCoordinator): login, forgot password as a modal,
registration as a child coordinator pushed onto the same stack. Its screens are data (spec §21): the login form's
Sign in button sends the user and password it holds, and the coordinator asks its ancestor, Main (another plugin),
to switch to the authenticated root; Main's guard decides."""
import sys

import switchyard
from switchyard import coordinator, reject, screen, ui

plugin = switchyard.Plugin("unauthenticated", "1.0.0")

USER = {"name": "user", "type": "string"}


@plugin.coordinator
class Unauthenticated(switchyard.Coordinator):
    type_name = "unauthenticated"
    initial = "login"
    routes = [
        switchyard.root("login", actions=[
            {"name": "signIn", "params": [USER, {"name": "password", "type": "string"}]},
            "forgotPassword", "register",
        ]),
        switchyard.modal("forgotPassword", deep_link="forgot",
                         actions=[{"name": "send", "params": [{"name": "email", "type": "string"}]}]),
        switchyard.push("registration", deep_link="register", target="registration"),
    ]

    def login(self, params, link):
        return ui.screen("Login", title="Sign in", content=[
            ui.symbol("person.crop.circle"),
            ui.text("Welcome back", style="title"),
            ui.text("Sign in to see your todos and projects.", style="caption"),
            ui.text_field("user", label="User", placeholder="alice"),
            ui.secure_field("password", label="Password", placeholder="any password"),
            ui.button("Sign in", ui.action("signIn", inputs=["user", "password"]), style="primary"),
            ui.button("Forgot password?", ui.action("forgotPassword")),
            ui.button("Create an account", ui.action("register")),
        ])

    def forgotPassword(self, params, link):
        email = (link or {}).get("query", {}).get("email", "")
        return ui.screen("ForgotPassword", title="Reset password", props={"email": email}, content=[
            ui.text("Forgot your password?", style="headline"),
            ui.text("Enter your email and we will send you a link to choose a new one."),
            ui.text_field("email", label="Email", placeholder="alice@example.com", value=email or None),
            ui.button("Send link", ui.action("send", inputs=["email"]), style="primary", symbol="envelope"),
        ])

    def registration(self, params, link):
        return coordinator("registration")

    def action(self, name, params, route, entry):
        given = params or {}
        if name == "signIn":
            user = given.get("user", "").strip()
            if not user:
                raise reject("enter your user name")
            if not given.get("password"):
                raise reject("enter your password")
            # Main is this flow's ancestor in another plugin: it decides (its guard refuses a locked account).
            return [{"op": "parent"}, {"op": "setRoot", "route": "authenticated", "params": {"user": user}}]
        if name == "forgotPassword":
            return [{"op": "route", "route": "forgotPassword"}]
        if name == "register":
            return [{"op": "route", "route": "registration"}]
        if name == "send":
            if "@" not in given.get("email", ""):
                raise reject("enter the email address of your account")
            sys.stderr.write("unauthenticated: a reset link goes to %s\n" % given["email"])
            return [{"op": "dismiss"}]
        return None


@plugin.coordinator
class Registration(switchyard.Coordinator):
    type_name = "registration"
    initial = "form"
    routes = [
        switchyard.root("form", actions=[{"name": "create", "params": [USER]}, "terms"]),
        switchyard.modal("terms"),
        switchyard.push("done", params=["user"]),
    ]

    def form(self, params, link):
        return ui.screen("RegistrationForm", title="Create an account", content=[
            ui.text_field("user", label="User name", placeholder="alice"),
            ui.button("Create account", ui.action("create", inputs=["user"]), style="primary"),
            ui.button("Terms of use", ui.action("terms")),
        ])

    def terms(self, params, link):
        return screen("Terms")

    def done(self, params, link):
        user = params.get("user", "")
        if not user.strip():
            raise reject("choose a user name")
        # Registered: sign in. Main is an ancestor in another plugin: ask it to take its authenticated root.
        # (registration -> unauthenticated -> main)
        self.navigate([{"op": "parent"}, {"op": "parent"},
                       {"op": "setRoot", "route": "authenticated", "params": {"user": user}}])
        return screen("Welcome", user=user)

    def action(self, name, params, route, entry):
        if name == "create":
            return [{"op": "route", "route": "done", "params": {"user": (params or {}).get("user", "")}}]
        if name == "terms":
            return [{"op": "route", "route": "terms"}]
        return None


if __name__ == "__main__":
    plugin.run()
