"""JSON Patch (RFC 6902) as the host's tree deltas use it (Protocol/README.md §15.3), for control clients."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

__all__ = ["PatchError", "apply_tree_change", "apply_patch"]


class PatchError(ValueError):
    """A patch that does not apply to the document it is given (the client turns it into a ProtocolViolation)."""


def apply_tree_change(tree: Optional[Dict[str, Any]], change: Dict[str, Any]) -> Dict[str, Any]:
    """The tree after a tree/changed notification's params: its snapshot when it has one, else `tree` (the snapshot
    the watcher holds, not modified) with the patch applied. Raises PatchError when the patch is not for `tree`'s
    revision or does not apply."""
    if change.get("snapshot") is not None:
        snapshot: Dict[str, Any] = change["snapshot"]
        return snapshot
    if "patch" not in change:
        raise PatchError("tree/changed of revision %s has neither a snapshot nor a patch" % change.get("revision"))
    if tree is None or change.get("base") != tree.get("revision"):
        raise PatchError("tree/changed patches revision %s, but the tree held is revision %s"
                         % (change.get("base"), None if tree is None else tree.get("revision")))
    patched: Dict[str, Any] = apply_patch(tree, change["patch"])
    return patched


def apply_patch(document: Any, patch: List[Dict[str, Any]]) -> Any:
    """JSON Patch (RFC 6902): returns `document` with the operations applied; `document` itself is not modified
    (only the containers on each operation's path are copied). Raises PatchError naming the operation."""
    for index, operation in enumerate(patch):
        try:
            document = _apply_operation(document, operation)
        except (KeyError, IndexError, ValueError, TypeError) as error:
            raise PatchError("patch operation %d (%s %s) does not apply: %s"
                             % (index, operation.get("op"), operation.get("path"), error)) from None
    return document


def _pointer(path: str) -> List[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError("%r is not a JSON pointer" % path)
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def _index(token: str, length: int) -> int:
    """An array index as RFC 6901 writes it (digits, no leading zero), below `length`: Python's negative indices and
    int()'s leniency ("-1", "+1", " 1") are not JSON Pointer, and "-1" would reach the last element."""
    if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
        raise IndexError("'%s' is not an array index" % token)
    if int(token) >= length:
        raise IndexError("index %s is out of range" % token)
    return int(token)


def _get(document: Any, tokens: List[str]) -> Any:
    for token in tokens:
        document = document[_index(token, len(document))] if isinstance(document, list) else document[token]
    return document


def _edit(document: Any, tokens: List[str], change: Callable[[Any, str], None]) -> Any:
    """A copy of `document` where the container holding the last token is `change(copy_of_container, token)`."""
    if not tokens:
        raise ValueError("the whole document cannot be edited in place")
    copy: Any = list(document) if isinstance(document, list) else dict(document)
    token = tokens[0]
    if len(tokens) == 1:
        change(copy, token)
    else:
        key: Any = _index(token, len(copy)) if isinstance(copy, list) else token
        copy[key] = _edit(copy[key], tokens[1:], change)
    return copy


def _add(container: Any, token: str, value: Any) -> None:
    if isinstance(container, list):
        position = len(container) if token == "-" else _index(token, len(container) + 1)
        container.insert(position, value)
    else:
        container[token] = value


def _remove(container: Any, token: str) -> None:
    if isinstance(container, list):
        del container[_index(token, len(container))]
    else:
        del container[token]


def _apply_operation(document: Any, operation: Dict[str, Any]) -> Any:
    op, tokens = operation["op"], _pointer(operation["path"])
    if op == "add":
        return _edit(document, tokens, lambda c, t: _add(c, t, operation["value"]))
    if op == "remove":
        return _edit(document, tokens, _remove)
    if op == "replace":
        def replace(container: Any, token: str) -> None:
            _remove(container, token)
            _add(container, token, operation["value"])
        return _edit(document, tokens, replace)
    if op in ("move", "copy"):
        source = _pointer(operation["from"])
        value = _get(document, source)
        if op == "move":
            document = _edit(document, source, _remove)
        return _edit(document, tokens, lambda c, t: _add(c, t, value))
    if op == "test":
        if _get(document, tokens) != operation.get("value"):
            raise ValueError("test failed")
        return document
    raise ValueError("unknown op %r" % op)
