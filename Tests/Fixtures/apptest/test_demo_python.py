"""The demo's Python plugins (unauthenticated, profile) tested with `switchyard.testing.AppTest` over a real host:
every change of the tree and every notification a plugin received is asserted, as The Composable Architecture's
TestStore asserts every state change. Run by AppTestHelperTests: `python3 -m pytest`, with SWITCHYARD (the CLI) and
SWITCHYARD_DEMO_MANIFEST set."""
import os

import pytest

from switchyard.testing import AppTest, AppTestFailure

MANIFEST = os.environ["SWITCHYARD_DEMO_MANIFEST"]

SIGNED_OUT = """
main.main
  root unauthenticated -> unauthenticated.unauthenticated
    root login: Login
"""

SIGNED_IN = """
main.main
  root authenticated {"user":"%s"} -> authenticated.home
    tab todos%s -> todos.navigation
      child content -> todos.todos
        root list: TodoList {"count":4}
    tab projects -> projects.projects
      root list: ProjectList {"count":3}
    tab profile%s -> profile.profile
      root overview: Profile
"""


def signed_in(user, tab="todos", extra=""):
    selected = " (selected)"
    return SIGNED_IN % (user, selected if tab == "todos" else "", selected if tab == "profile" else "") + extra


def test_forgot_password_is_a_sheet_the_user_dismisses():
    with AppTest(MANIFEST) as app:
        app.open("switchyard://forgot?email=a@b.c")
        app.expect_tree(SIGNED_OUT + '    modal forgotPassword: ForgotPassword {"email":"a@b.c"}')
        app.dismiss("unauthenticated.unauthenticated")
        app.expect_tree(SIGNED_OUT)
        app.expect_received("unauthenticated.unauthenticated dismissed forgotPassword (user)")


def test_registering_signs_the_user_in_through_main():
    with AppTest(MANIFEST) as app:
        app.navigate([{"op": "route", "route": "registration"}], at="unauthenticated.unauthenticated")
        registration = SIGNED_OUT + "    push registration -> unauthenticated.registration\n      root form: RegistrationForm"
        app.expect_tree(registration)
        app.navigate([{"op": "route", "route": "done", "params": {"user": "bob"}}], at="unauthenticated.registration")
        app.expect_tree(registration + '\n      push done {"user":"bob"}: Welcome {"user":"bob"}')
        # The plugin's own navigation after its answer (Main's setRoot): the next change, waited for.
        app.expect_tree(signed_in("bob"))
        app.expect_received(
            "unauthenticated.registration dismissed done (navigation)",
            "unauthenticated.registration dismissed form (navigation)",
            "unauthenticated.unauthenticated dismissed registration (navigation)",
            "unauthenticated.unauthenticated dismissed login (navigation)",
            "main.main dismissed unauthenticated (navigation)",
            "unauthenticated.registration destroyed",
            "unauthenticated.unauthenticated destroyed",
        )


def test_profile_settings_saved_by_an_action_pop_and_the_overview_appears():
    with AppTest(MANIFEST) as app:
        app.navigate([{"op": "setRoot", "route": "authenticated", "params": {"user": "alice"}}])
        app.expect_tree(signed_in("alice"))
        app.expect_received("unauthenticated.unauthenticated dismissed login (navigation)",
                            "main.main dismissed unauthenticated (navigation)",
                            "unauthenticated.unauthenticated destroyed")
        app.navigate([{"op": "selectTab", "tab": "profile"}, {"op": "route", "route": "settings"}],
                     at="authenticated.home")
        app.expect_tree(signed_in("alice", tab="profile", extra="      push settings: Settings"))
        app.expect_received("authenticated.home tabSelected profile")
        app.action("profile.profile", "save", {"theme": "dark"})
        app.expect_tree(signed_in("alice", tab="profile"))
        app.expect_received("profile.profile dismissed settings (navigation)", "profile.profile appeared overview")


def test_an_unasserted_change_fails_with_a_readable_diff():
    with pytest.raises(AppTestFailure) as failure:
        with AppTest(MANIFEST) as app:
            app.open("switchyard://about")
            app.open("switchyard://forgot")
    message = str(failure.value)
    assert message.startswith("before open switchyard://forgot, 1 change(s) of the tree not asserted"), message
    assert '+  modal about: About {"version":"1.0.0"}' in message, message


def test_a_wrong_expectation_fails_with_both_trees_diffed():
    with AppTest(MANIFEST) as app:
        app.open("switchyard://about")
        with pytest.raises(AppTestFailure) as failure:
            app.expect_tree(SIGNED_OUT + '  modal about: About {"version":"2.0.0"}')
        message = str(failure.value)
        assert '-  modal about: About {"version":"2.0.0"}' in message, message
        assert '+  modal about: About {"version":"1.0.0"}' in message, message


def test_not_exhaustive_checks_only_what_the_test_asserts():
    with AppTest(MANIFEST, exhaustive=False) as app:
        app.open("switchyard://about")
        app.open("switchyard://forgot")
        app.navigate([{"op": "popLast"}], at="unauthenticated.unauthenticated")
        app.expect_tree(SIGNED_OUT + '  modal about: About {"version":"1.0.0"}')
        app.expect_received("unauthenticated.unauthenticated dismissed forgotPassword (navigation)")
