#!/usr/bin/env python3
"""A plugin with a bug at import time: it dies before answering `initialize`.

The host must show this traceback (the plugin's last stderr lines) in the handshake error, so the author sees the
`KeyError` and its line instead of "exited with code 1".
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402,F401

SETTINGS = {"routes": ["home"]}
INITIAL_ROUTE = SETTINGS["initial_route"]  # the bug: no such key
