"""The plugin's end of the protocol (§1–§3): lines in and out, ids, answers, and when plugin code answers later.

stdout belongs to the protocol: `run()` writes messages to fd 1 itself and points `sys.stdout` at stderr, so a stray
print() lands in the host log instead of corrupting the stream."""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Awaitable, Callable, Dict, Iterator, List, NoReturn, Optional, Tuple, TypeVar

from ._async import AnswerScope, MaybeAwaitable, current_scope, is_awaitable
from ._json import InvalidJSON, encode_line
from .errors import INTERNAL_ERROR, METHOD_NOT_FOUND, RPCError
from .reply import Done, Reply

__all__ = ["Connection", "MAX_TRACEBACK_CHARS", "RequestHandler", "NotificationHandler"]

T = TypeVar("T")

#: How much of a handler's traceback goes into the error's data: the answer must stay one protocol line (§6's
#: maxLineBytes). The end is kept, where the exception is; stderr gets all of it.
MAX_TRACEBACK_CHARS = 16384

#: A handler of a host request: params in, the result out (a dict), now or awaited.
RequestHandler = Callable[[Dict[str, Any]], MaybeAwaitable[Any]]
#: A handler of a host notification: params in, nothing out (an awaitable is awaited; its failure is logged).
NotificationHandler = Callable[[Dict[str, Any]], MaybeAwaitable[None]]


class _Lines:
    """The lines of a file descriptor, read with os.read into a buffer of its own: no Python file object, so the
    reading can move to a thread (when an event loop starts) without losing buffered bytes, and a thread blocked in
    it cannot hold a lock the interpreter's exit needs."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.searched = 0

    def __iter__(self) -> Iterator[bytes]:
        while True:
            newline = self.buffer.find(b"\n", self.searched)
            if newline >= 0:
                line = bytes(self.buffer[:newline])
                del self.buffer[:newline + 1]
                self.searched = 0
                yield line
                continue
            self.searched = len(self.buffer)
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:  # end of stream: a last line without its \n is still a line (§1)
                if self.buffer:
                    line = bytes(self.buffer)
                    self.buffer.clear()
                    yield line
                return
            self.buffer += chunk


class Connection:
    """The protocol endpoint of a plugin process: dispatches the host's requests and notifications to handlers,
    answers each request exactly once, and sends the plugin's own requests (`call`, `defer_call`).

    A handler that returns an awaitable is answered when it completes: `run()` then starts an asyncio event loop
    (reading stdin on a thread of its own, so `$/ping` and other requests are answered meanwhile). Handlers that
    return a value are answered at once, in the order their requests came."""

    def __init__(self) -> None:
        #: Request handlers by method (`coordinator/*` are the SDK's own once a coordinator type is registered).
        self.handlers: Dict[str, RequestHandler] = {}
        #: Notification handlers by method.
        self.notification_handlers: Dict[str, NotificationHandler] = {}
        self._next_id = 1
        self._pending: Dict[Any, Reply[Any]] = {}
        self._shutdown = False
        self._out: Optional[Any] = None
        self._loop: Optional[Any] = None
        self._stopped: Optional[Any] = None
        # Work that needs an event loop, found while none runs: (scope or None, awaitable, what).
        self._parked: List[Tuple[Optional[AnswerScope], Awaitable[Any], str]] = []

    # -- registration -------------------------------------------------------------------------------------------
    def request(self, method: str) -> Callable[[RequestHandler], RequestHandler]:
        """Decorator: handle the host request `method`. The handler gets the params dict and returns the result (a
        dict), or an awaitable of it (`async def`); raising RPCError answers with that error."""
        def register(function: RequestHandler) -> RequestHandler:
            self.handlers[method] = function
            return function
        return register

    def notification(self, method: str) -> Callable[[NotificationHandler], NotificationHandler]:
        """Decorator: handle the host notification `method` (params in, nothing answered; `async def` works too)."""
        def register(function: NotificationHandler) -> NotificationHandler:
            self.notification_handlers[method] = function
            return function
        return register

    # -- talking to the host -------------------------------------------------------------------------------------
    def send(self, message: Dict[str, Any]) -> None:
        """Writes one message now (`jsonrpc` is added). Raises InvalidJSON (a ValueError) naming a value JSON cannot
        carry, such as NaN, before anything is written."""
        self._write(encode_line(dict(message, jsonrpc="2.0")))

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, done: Optional[Done] = None) -> Reply[Any]:
        """Sends a request to the host now. Await the returned Reply for the result, or pass `done(result, error)`."""
        reply, line = self._request(method, params, done, _same, None)
        self._write(line)
        return reply

    def defer_call(self, method: str, params: Optional[Dict[str, Any]] = None, done: Optional[Done] = None) -> Reply[Any]:
        """Like call(), but while a handler of a host request runs, sent right after that handler's answer (so the
        host sees the answer first, §8 `navigate`); elsewhere sent now."""
        return self._defer(method, params, done, _same)

    def _defer(self, method: str, params: Optional[Dict[str, Any]], done: Optional[Done],
               transform: Callable[[Any], T]) -> Reply[T]:
        scope = current_scope.get()
        if scope is not None and not scope.answered:
            reply, line = self._request(method, params, done, transform, scope)
            scope.waiting.append(line)
        else:
            reply, line = self._request(method, params, done, transform, None)
            self._write(line)
        return reply

    def log(self, level: str, message: str) -> None:
        """A `log` notification (§8): `level` is trace, debug, info, notice, warning, error or critical."""
        self.send({"method": "log", "params": {"level": level, "message": message}})

    def _request(self, method: str, params: Optional[Dict[str, Any]], done: Optional[Done],
                 transform: Callable[[Any], T], scope: Optional[AnswerScope]) -> Tuple[Reply[T], bytes]:
        request_id = "py-%d" % self._next_id
        # Encoded now, so a NaN in the params fails in the code that passed it, not after the answer.
        line = encode_line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        self._next_id += 1
        reply: Reply[T] = Reply(method, request_id, scope, transform, done)
        self._pending[request_id] = reply
        return reply, line

    def _write(self, line: bytes) -> None:
        if self._out is None:
            raise RuntimeError("the plugin is not running: call run() first")
        self._out.write(line)
        self._out.flush()

    # -- receiving ----------------------------------------------------------------------------------------------------
    def _handle(self, method: str, params: Dict[str, Any]) -> MaybeAwaitable[Any]:
        """The result of a host request (overridden for the lifecycle methods)."""
        if method == "$/ping":
            return {}
        if method == "shutdown":
            self._shutdown = True
            return {}
        handler = self.handlers.get(method)
        if handler is None:
            raise RPCError(METHOD_NOT_FOUND, "unknown method '%s'" % method, {"method": method})
        return handler(params)

    def _receive(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError as error:
            sys.stderr.write("switchyard: ignoring a line that is not JSON: %s\n" % error)
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        params = message.get("params") or {}
        if method is None:
            reply = self._pending.pop(message.get("id"), None)
            if reply is not None:
                try:
                    reply.resolve(message.get("result"), message.get("error"))
                except Exception:
                    _report("the callback of request %s" % reply.request_id)
        elif "id" not in message:
            self._notified(method, params)
        else:
            self._answer(message["id"], method, params)

    def _notified(self, method: str, params: Dict[str, Any]) -> None:
        if method == "exit":
            self._exit(0 if self._shutdown else 1)
            return
        handler = self.notification_handlers.get(method)
        if handler is None:
            return
        try:
            outcome = handler(params)
        except Exception:  # nobody to answer: the traceback goes to the host log, the plugin goes on
            _report(method)
            return
        if is_awaitable(outcome):
            self._later(None, outcome, method)

    def _answer(self, request_id: Any, method: str, params: Dict[str, Any]) -> None:
        scope = AnswerScope(request_id, method)
        token = current_scope.set(scope)
        try:
            outcome = self._handle(method, params)
        except Exception as error:
            self._finish(scope, None, error)
            return
        finally:
            current_scope.reset(token)
        if is_awaitable(outcome):
            self._later(scope, outcome, method)
        else:
            self._finish(scope, outcome, None)

    def _finish(self, scope: AnswerScope, result: Any, error: Optional[BaseException]) -> None:
        """Writes the answer of `scope`'s request, then the requests its handler made."""
        if error is None:
            message: Dict[str, Any] = {"jsonrpc": "2.0", "id": scope.request_id,
                                       "result": result if result is not None else {}}
        else:
            message = {"jsonrpc": "2.0", "id": scope.request_id, "error": _error_body(error, scope)}
        try:
            line = encode_line(message)
        except InvalidJSON as invalid:
            # The answer cannot be one valid line: answer that instead, naming the value (a NaN in a screen's props)
            # and, when the author's method produced it, that method.
            text = (scope.site.unsendable(str(invalid)) if scope.site is not None
                    else "the answer to %s cannot be sent: %s" % (scope.method, invalid))
            sys.stderr.write("switchyard: %s\n" % text)
            data: Dict[str, Any] = {"type": "InvalidJSON", "field": invalid.field}
            if scope.site is not None:
                data.update(scope.site.data())
            line = encode_line({"jsonrpc": "2.0", "id": scope.request_id, "error": {
                "code": int(INTERNAL_ERROR), "message": text, "data": data}})
        scope.answered = True
        self._write(line + b"".join(scope.waiting))
        scope.waiting.clear()

    # -- answering later ------------------------------------------------------------------------------------------
    def _later(self, scope: Optional[AnswerScope], awaitable: Awaitable[Any], what: str) -> None:
        if self._loop is None:
            self._parked.append((scope, awaitable, what))  # run() starts the event loop after this line
        else:
            self._loop.create_task(self._complete(scope, awaitable, what))

    async def _complete(self, scope: Optional[AnswerScope], awaitable: Awaitable[Any], what: str) -> None:
        import asyncio

        if scope is not None:
            current_scope.set(scope)  # this task's context only
            scope.task = asyncio.current_task()
        try:
            result = await awaitable
        except Exception as error:
            if scope is None:
                _report(what)
            else:
                self._finish(scope, None, error)
            return
        if scope is not None:
            self._finish(scope, result, None)

    # -- running ------------------------------------------------------------------------------------------------------
    def _start(self) -> None:
        """Takes fd 1 for the protocol (print() and anything else using sys.stdout goes to stderr). No descriptor is
        opened, so the plugin holds exactly 0, 1 and 2."""
        self._out = open(1, "wb", closefd=False)
        sys.stdout = sys.stderr

    def run(self) -> NoReturn:
        """Serves the host on stdin and stdout until stdin ends or the host says `exit`, then exits the process.

        Plain handlers are answered in this thread; the first awaitable a handler returns starts an asyncio event
        loop, which serves from then on (stdin read on a thread of its own)."""
        self._start()
        lines = _Lines(0)
        for line in lines:
            self._receive(line)
            if self._parked:
                import asyncio

                sys.exit(asyncio.run(self._serve(lines)))
        # stdin reached EOF: the host closed it or died. The contract is to exit.
        sys.exit(0)

    async def serve(self) -> int:
        """run() inside an event loop of the caller's: serves the host until stdin ends or the host says `exit`, and
        returns the exit status the protocol asks for (`sys.exit(asyncio.run(plugin.serve()))`). For a plugin that
        runs tasks of its own beside the protocol (a timer, a socket)."""
        self._start()
        return await self._serve(_Lines(0))

    async def _serve(self, lines: _Lines) -> int:
        import asyncio
        import threading

        loop = asyncio.get_running_loop()
        self._loop = loop
        self._stopped = loop.create_future()
        parked, self._parked = self._parked, []
        for scope, awaitable, what in parked:
            self._later(scope, awaitable, what)

        def pump() -> None:
            try:
                for line in lines:
                    loop.call_soon_threadsafe(self._receive, line)
                loop.call_soon_threadsafe(self._exit, 0)
            except RuntimeError:  # the loop has closed: the process is exiting
                pass

        threading.Thread(target=pump, name="switchyard-stdin", daemon=True).start()
        status: int = await self._stopped
        return status

    def _exit(self, status: int) -> None:
        if self._stopped is None:
            sys.exit(status)
        if not self._stopped.done():
            self._stopped.set_result(status)


def _same(result: Any) -> Any:
    """A request's result as it came (what awaiting most Replies gives)."""
    return result


def _error_body(error: BaseException, scope: AnswerScope) -> Dict[str, Any]:
    """The `error` member answering a handler's failure: a typed error as it is; anything else `internalError` naming
    the exception, with its traceback (§7: the traceback is what makes the bug fixable; stderr gets it too, for
    the case where nobody sees the answer) and, when the author's method raised it, the route, the type, the method
    and its file and line."""
    if isinstance(error, RPCError):
        return error.to_json()
    data: Dict[str, Any] = {"type": type(error).__name__,
                            "traceback": _report(scope.method, error)[-MAX_TRACEBACK_CHARS:]}
    if isinstance(error, InvalidJSON):
        data["field"] = error.field
    message = "%s: %s" % (type(error).__name__, error)
    if scope.site is not None:
        message = scope.site.raised(error)
        data.update(scope.site.data(error.__traceback__))
    return {"code": int(INTERNAL_ERROR), "message": message, "data": data}


def _report(what: str, error: Optional[BaseException] = None) -> str:
    """Writes `error` (default: the exception being handled) to stderr, naming what failed; returns its traceback.

    The traceback starts at the first frame outside this package: the SDK's dispatch frames before the plugin's
    code say nothing to its author, and would push the plugin's own stderr lines out of the tail the host keeps
    (§7: 20 lines). Frames of the SDK called from the plugin's code are kept."""
    import traceback  # here, not at the top: ~3 ms of every plugin's start-up, for the rare failure

    error = error if error is not None else sys.exc_info()[1]
    if error is None:
        text = "no exception\n"
    else:
        start = error.__traceback__
        while start is not None and _in_package(start.tb_frame.f_code.co_filename):
            start = start.tb_next
        text = "".join(traceback.format_exception(type(error), error, start or error.__traceback__))
    sys.stderr.write("switchyard: %s failed:\n%s" % (what, text))
    sys.stderr.flush()
    return text


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _in_package(path: str) -> bool:
    return os.path.dirname(os.path.abspath(path)) == _PACKAGE
