#!/usr/bin/env python3
"""The unauthenticated flow (Stinsen README's UnauthenticatedCoordinator): login, forgot password as a modal,
registration as a child coordinator pushed onto the same stack. Finishing the registration signs the new user in:
the plugin's own logic asks its ancestor, Main, to switch root (Main's plugin decides)."""
import switchyard
from switchyard import screen, coordinator, reject

plugin = switchyard.Plugin("unauthenticated", "1.0.0")


@plugin.coordinator
class Unauthenticated(switchyard.Coordinator):
    type_name = "unauthenticated"
    initial = "login"
    routes = [
        switchyard.root("login"),
        switchyard.modal("forgotPassword", deep_link="forgot"),
        switchyard.push("registration", deep_link="register", target="registration"),
    ]

    def login(self, params, link):
        return screen("Login")

    def forgotPassword(self, params, link):
        return screen("ForgotPassword", email=(link or {}).get("query", {}).get("email", ""))

    def registration(self, params, link):
        return coordinator("registration")


@plugin.coordinator
class Registration(switchyard.Coordinator):
    type_name = "registration"
    initial = "form"
    routes = [
        switchyard.root("form"),
        switchyard.modal("terms"),
        switchyard.push("done", params=["user"]),
    ]

    def form(self, params, link):
        return screen("RegistrationForm")

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


if __name__ == "__main__":
    plugin.run()
