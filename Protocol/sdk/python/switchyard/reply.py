"""The host's answer to a request the plugin sent (`navigate`, `tree/query`, or any `call`)."""
from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Generator, Generic, Optional, TypeVar

from ._async import AnswerScope
from .errors import RPCError

__all__ = ["Reply", "Done"]

T = TypeVar("T")

#: The callback form: `done(result, error)`, `error` being the answer's `error` member (a dict) or None.
Done = Callable[[Any, Optional[Dict[str, Any]]], None]


class Reply(Generic[T]):
    """What a request the plugin sent will answer. `await reply` gives the result or raises the host's refusal as
    an RPCError; `done=` callbacks given to the call still get `(result, error)`.

    Requests made while a handler of the host's runs are sent after that handler's answer, so awaiting one in the
    handler that made it would wait forever: that await raises a RuntimeError at once instead. Await it in a task
    of its own (`asyncio.create_task`), or not at all: the request is sent either way.

    A refusal nobody awaits and no `done` receives is written to stderr (the host log), so it is not lost."""

    __slots__ = ("method", "request_id", "_scope", "_transform", "_done", "_settled", "_result", "_error",
                 "_future", "_observed")

    def __init__(self, method: str, request_id: str, scope: Optional[AnswerScope],
                 transform: Callable[[Any], T], done: Optional[Done]) -> None:
        self.method = method
        self.request_id = request_id
        self._scope = scope
        self._transform = transform
        self._done = done
        self._settled = False
        self._result: Any = None
        self._error: Optional[Dict[str, Any]] = None
        self._future: Optional[Any] = None
        self._observed = done is not None

    @property
    def settled(self) -> bool:
        """Whether the host has answered."""
        return self._settled

    def resolve(self, result: Any, error: Optional[Dict[str, Any]]) -> None:
        """Called by the connection with the host's answer (`result`, or `error`: `{code, message, data?}`)."""
        self._settled = True
        self._result = result
        self._error = error if error is None or isinstance(error, dict) else {"code": -32603, "message": str(error)}
        if self._future is not None and not self._future.done():
            self._future.set_result(None)
        if self._done is not None:
            self._done(result, self._error)
        elif self._error is not None and not self._observed:
            sys.stderr.write("switchyard: %s (request %s) failed and nothing awaited it: %s\n"
                             % (self.method, self.request_id, self._error.get("message")))

    def _value(self) -> T:
        if self._error is not None:
            raise RPCError(self._error.get("code", -32603), str(self._error.get("message", "")), self._error.get("data"))
        return self._transform(self._result)

    def __await__(self) -> Generator[Any, None, T]:
        """Waits for the host's answer: its result (transformed for the call), or its refusal raised as RPCError."""
        self._observed = True
        if not self._settled:
            import asyncio  # loaded already: something is awaiting

            scope = self._scope
            if scope is not None and not scope.answered and scope.task is asyncio.current_task():
                raise RuntimeError(
                    "%s is sent after the answer to %s (request %s), so awaiting it inside that handler would wait "
                    "forever (Protocol/README.md §8, navigate): do not await it there, or await it in a task of its own "
                    "(asyncio.create_task)" % (self.method, scope.method, scope.request_id))
            if self._future is None:
                self._future = asyncio.get_running_loop().create_future()
            yield from self._future.__await__()
        return self._value()
