"""What a toolset may tell the approval gate about its tools, beyond pydantic-ai's `AbstractToolset`.

The gate (`llm_do.runtime.toolsets.gate`) asks each tool's toolset through `hooks_of`: a toolset
that subclasses `ToolsetHooks` (the stdlib's `StdlibToolset`) answers for itself, any other (Python
toolsets, worker calls, MCP servers) gets the defaults below, which leave every decision to the
bundle's approval rules and show and judge the arguments as the model gave them.

`JUDGED` carries the other way what the gate decided on: the call's normalized arguments, so a
toolset that serializes its calls (the stdlib's filesystem lock) can normalize them again under its
lock and refuse a call whose paths changed between the decision and the effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from llm_do.bundle.approval import Action


class HookHost(Protocol):
    """What a hook may ask of the run it judges a call for (`runtime.call_scope.RunHost` is one)."""

    def check_new_worker(self, name: str, instructions: str, description: str, model: str | None = None, *,
                         folder: str | None = None) -> None:
        """Raise `DefinitionProblem` for a worker the run would refuse to create."""


@dataclass(frozen=True)
class Decisive:
    """A shown argument that decides where the call takes effect (a path, a command line): every
    approver is shown all of it, never cut or summarized, since a cut could hide where a write
    goes; `where` names the directory it is relative to (`in docs/`), shown beside it."""

    text: str
    where: str | None = None


@runtime_checkable
class ToolsetHooks(Protocol):
    """The questions the gate asks a tool's toolset. Subclass it to answer some of them; the
    others keep these defaults."""

    def approval_for(self, name: str, args: Mapping[str, object]) -> Action:
        """The approval a call needs when the bundle leaves it to the toolset (`auto`): by default,
        ask."""
        return "ask"

    def always_asks(self, name: str) -> bool:
        """Whether every call of the tool is asked, whatever the rules say (`worker_create`)."""
        return False

    def normalize_args(self, name: str, args: Mapping[str, object]) -> dict[str, object]:
        """The arguments an approval rule judges, as the tool will use them (a path resolved below
        the toolset's root, a command line parsed); by default, as given."""
        return dict(args)

    def shown_args(self, name: str, args: Mapping[str, object]) -> dict[str, object] | None:
        """The call's arguments as every approver is shown them, as the rules judge them (paths
        and commands as `Decisive`); None: as given."""
        return None

    def attachments(self, name: str, args: Mapping[str, object]) -> list[str]:
        """The files a call hands to another worker's model (worker calls' `attachments`), as
        the model named them (relative to the project root): the gate judges each as a read by
        the calling worker. By default, none."""
        return []

    def reads(self, name: str, path: str) -> dict[str, object] | None:
        """The normalized arguments of a call of `name` that would read the file at `path`
        (absolute, links resolved), when this tool reads files and would read that one; None
        otherwise (the default). How the gate judges an attachment as the worker's own read."""
        return None

    def moves(self, name: str, normalized: Mapping[str, object]) -> tuple[list[str], str] | None:
        """The files a call moves (copies, links) and where to, as absolute paths with links
        resolved, from its normalized arguments: the taint guard judges such a call on what it
        moves, not only on what the model read. By default, none."""
        return None

    def refusal(self, name: str, args: Mapping[str, object], host: HookHost) -> str | None:
        """Why the call would fail whatever the answer (a `worker_create` of a taken name), found
        before anyone is asked: the tool then fails unasked with this message. `host` is the run.
        By default, nothing is known before the call."""
        return None

    def edit_args(self, name: str, args: Mapping[str, object]) -> dict[str, object] | None:
        """Let a person edit the call before approving it (on the terminal, in $EDITOR): the edited
        arguments, or None when unchanged; raises ValueError saying why an edit cannot be used.
        Offered only by a toolset that overrides it (`offers_edit`)."""
        return None


class _Defaults(ToolsetHooks):
    """The answers for a toolset that gives none of its own."""


DEFAULT_HOOKS: ToolsetHooks = _Defaults()


def hooks_of(toolset: object) -> ToolsetHooks:
    """The toolset itself when it answers the gate's questions, else the defaults."""
    return toolset if isinstance(toolset, ToolsetHooks) else DEFAULT_HOOKS


def offers_edit(hooks: ToolsetHooks) -> bool:
    """Whether the toolset lets a person edit its calls before approving them."""
    return type(hooks).edit_args is not ToolsetHooks.edit_args


@dataclass(frozen=True)
class JudgedCall:
    """A call as the gate decided it: the tool and the normalized arguments its rules saw (and a
    person approved)."""

    tool: str
    normalized: Mapping[str, object]
    attachments: dict[str, str] | None = None
    """For a worker call with attachments: each path as the model gave it -> the file the gate
    judged (absolute, links resolved), which is the file the callee's prompt must read."""


JUDGED: ContextVar[JudgedCall | None] = ContextVar("llm_do_judged_call", default=None)
"""Set by the gate around each call it lets through (the call's own task and context); None where
no gate stands in front of the toolset (a toolset called directly)."""


def judged_attachments() -> dict[str, str] | None:
    """The attachments the gate judged for the call being made, or None (no gate judged any)."""
    judged = JUDGED.get()
    return None if judged is None else judged.attachments


def changes_since_judged(name: str, normalized: Mapping[str, object]) -> list[str]:
    """What differs between the call's arguments normalized now and as the gate judged them, one
    `param: 'then' -> 'now'` each; empty when nothing did (or no gate judged this call)."""
    judged = JUDGED.get()
    if judged is None or judged.tool != name or judged.normalized == normalized:
        return []
    keys = sorted(set(judged.normalized) | set(normalized))
    return [f"{key}: {_shown(judged.normalized, key)} -> {_shown(normalized, key)}"
            for key in keys if judged.normalized.get(key, _GONE) != normalized.get(key, _GONE)]


_GONE = object()


def _shown(args: Mapping[str, object], key: str) -> str:
    return repr(args[key]) if key in args else "(refused)"
