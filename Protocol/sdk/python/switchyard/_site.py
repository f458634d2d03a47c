"""Where in the plugin author's code a request went wrong: the route, the coordinator type, the method the author
wrote (with its file and line) and the host's method, so the error the host and the user see points at the code
to fix instead of at the SDK or the host's check of the answer (issue 30)."""
from __future__ import annotations

from types import CodeType, TracebackType
from typing import Any, Callable, Optional, Tuple

__all__ = ["HandlerSite"]


class HandlerSite:
    """The author's method answering one request: `what` names the route and the type ("route 'todo' of todos"),
    `name` the method ("TodoList.todo"), `function` is the method itself (for its file and line), `method` the host's
    request, `expected` what it must return, `returns` how to write that (valid Python), `refuse` how to refuse on
    purpose."""

    __slots__ = ("what", "name", "function", "method", "expected", "returns", "refuse")

    def __init__(self, what: str, name: str, function: Optional[Callable[..., Any]], method: str,
                 expected: str, returns: str, refuse: str) -> None:
        self.what = what
        self.name = name
        self.function = function
        self.method = method
        self.expected = expected
        self.returns = returns
        self.refuse = refuse

    def _code(self) -> Optional[CodeType]:
        function = getattr(self.function, "__func__", self.function)
        code = getattr(function, "__code__", None)
        return code if isinstance(code, CodeType) else None

    def location(self, traceback: Optional[TracebackType] = None) -> Optional[Tuple[str, int]]:
        """The file and line of the method: where it raised when `traceback` passes through it, else its `def`."""
        code = self._code()
        if code is None:
            return None
        line = code.co_firstlineno
        while traceback is not None:
            if traceback.tb_frame.f_code is code:
                line = traceback.tb_lineno
            traceback = traceback.tb_next
        return code.co_filename, line

    def _where(self, traceback: Optional[TracebackType] = None) -> str:
        location = self.location(traceback)
        at = "%s:%d, " % location if location else ""
        return "(%sanswering %s)" % (at, self.method)

    def raised(self, error: BaseException) -> str:
        """The message of an exception the method raised: what, where, and the way to refuse on purpose."""
        return "%s: %s raised %s: %s %s; fix it there (the traceback below), or %s" % (
            self.what, self.name, type(error).__name__, error, self._where(error.__traceback__), self.refuse)

    def returned(self, value: Any) -> str:
        """The message of a value the method returned that is not what the host asked for."""
        forgot = " (is `return` missing?)" if value is None else ""
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return "%s: %s returned %s%s instead of %s %s; end it with %s" % (
            self.what, self.name, shown, forgot, self.expected, self._where(), self.returns)

    def unsendable(self, problem: str) -> str:
        """The message of an answer JSON cannot carry (a NaN in a screen's props)."""
        return "%s: %s returned an answer that cannot be sent: %s %s" % (self.what, self.name, problem, self._where())

    def data(self, traceback: Optional[TracebackType] = None) -> dict[str, Any]:
        """The same, as fields of the error's `data`."""
        location = self.location(traceback)
        data: dict[str, Any] = {"handler": self.name}
        if location:
            data["file"], data["line"] = location
        return data
