"""Plugin code may answer now or later: the helpers that chain a value that may be awaitable, and the scope of the
request being answered.

A handler that returns a plain value is answered at once, in the same turn, as before asyncio was involved; only an
awaitable makes the SDK start an event loop (Plugin.run() imports asyncio on first need, so a plugin that never
awaits does not pay for it at start-up)."""
from __future__ import annotations

from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, TypeGuard, TypeVar, Union, cast

if TYPE_CHECKING:
    from ._site import HandlerSite

__all__ = ["MaybeAwaitable", "then", "sequence", "AnswerScope", "current_scope"]

T = TypeVar("T")
R = TypeVar("R")

#: What plugin code may return where the SDK asks it something: the value, or an awaitable of it (`async def`).
MaybeAwaitable = Union[T, Awaitable[T]]


def is_awaitable(value: object) -> TypeGuard[Awaitable[Any]]:
    """Whether `value` must be awaited (a coroutine, a future, anything with `__await__`)."""
    return isinstance(value, Awaitable)


def then(value: MaybeAwaitable[T], next: Callable[[T], MaybeAwaitable[R]]) -> MaybeAwaitable[R]:
    """`next(value)` at once when `value` is ready, else an awaitable of it once `value` is awaited."""
    if isinstance(value, Awaitable):
        return _chain(cast("Awaitable[T]", value), next)
    return next(value)


async def _chain(value: Awaitable[T], next: Callable[[T], MaybeAwaitable[R]]) -> R:
    result = next(await value)
    if isinstance(result, Awaitable):
        return await result
    return result


def sequence(items: Sequence[T], each: Callable[[T], MaybeAwaitable[R]]) -> MaybeAwaitable[List[R]]:
    """`[each(item) for item in items]`, one after the other: each call starts once the previous one has finished, so
    side effects keep their order whether the calls answer at once or later."""
    results: List[R] = []
    for index, item in enumerate(items):
        value = each(item)
        if isinstance(value, Awaitable):
            return _sequence_rest(cast("Awaitable[R]", value), items[index + 1:], each, results)
        results.append(value)
    return results


async def _sequence_rest(first: Awaitable[R], rest: Sequence[T], each: Callable[[T], MaybeAwaitable[R]],
                         results: List[R]) -> List[R]:
    results.append(await first)
    for item in rest:
        value = each(item)
        results.append(await value if isinstance(value, Awaitable) else value)
    return results


class AnswerScope:
    """One request of the host being answered: the requests the plugin makes meanwhile wait here and are sent right
    after the answer, so the host sees the answer first (§8, `navigate`: a chain waits for the answers it asked for).
    `task` is the asyncio task answering it, when it is answered later."""

    __slots__ = ("request_id", "method", "answered", "waiting", "task", "site")

    def __init__(self, request_id: Any, method: str) -> None:
        self.request_id = request_id
        self.method = method
        #: The author's method answering it (a route's), named in its errors; None for the SDK's own answers.
        self.site: Optional["HandlerSite"] = None
        self.answered = False
        self.waiting: List[bytes] = []
        self.task: Optional[Any] = None


#: The request whose handler is running (in this task, for an async one); None outside any.
current_scope: ContextVar[Optional[AnswerScope]] = ContextVar("switchyard_answer_scope", default=None)
