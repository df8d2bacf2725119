"""The information-flow labels of a capability, by the defaults of spec/language.md ("flows").

Pure functions of a capability's text and the project's policy (`flows.paths`, the MCP servers'
`labels`), erring on the safe side: a read of the project is private, an MCP tool returns
untrusted content and may send data out, the provider's web tools both. Python tools without a
declaration are labelled by the effects `code.effects` finds in their code (`python_labels`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from llm_do.bundle.flow import EGRESS, LABELS, PRIVATE, PUBLISHED, UNTRUSTED, folder_label

from ...code.effects import NETWORK, PROCESS, WRITE

LABEL_KINDS = frozenset(LABELS)
"""`private`, `untrusted`, `egress` as capability kinds: what a Python tool declares of itself."""
ROOTS = ("project", "cwd")
SENDING_NAME = re.compile(r"^(create|send|post|push|publish|upload|write|update|comment|reply|share|submit|put|add)_")
"""MCP tool names that say they send: they are egress even when their server is said not to be."""
PROVIDER_LABELS: Mapping[str, frozenset[str]] = {
    "web_search": frozenset({UNTRUSTED, EGRESS}),
    "web_fetch": frozenset({UNTRUSTED, EGRESS}),
}
"""Server-side tools: the provider runs them, so no gate can ask before one."""
EFFECT_LABELS: Mapping[str, frozenset[str]] = {
    NETWORK: frozenset({UNTRUSTED, EGRESS}),
    PROCESS: frozenset({UNTRUSTED, EGRESS}),
    WRITE: frozenset({EGRESS}),
}
"""An undeclared Python tool's labels from what its code does: a connection or a process can send
and receive anything, a write can land anywhere. Reading the environment is not a leg: tools read
their own credentials there, which the model never sees (as a model's `env:` is no leg)."""
NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LabelPolicy:
    """What project.json says of its paths and MCP servers."""

    paths: Mapping[str, str] = field(default_factory=dict)
    """Normalized project folder (`inputs`, `site/public`) -> `private`, `published` or `untrusted`."""
    mcp_labels: Mapping[str, frozenset[str] | None] = field(default_factory=dict)
    """Server -> its declared labels (None: the defaults)."""
    mcp_tool_labels: Mapping[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    """(server, the server's tool name) -> the tool's declared labels."""
    memo: dict[tuple[str, bool], frozenset[str]] = field(default_factory=dict, compare=False, repr=False)
    """Labels found so far: thousands of workers share a handful of capabilities."""
    resolve: Callable[[str], str] = field(default=lambda folder: folder, compare=False, repr=False)
    """A project folder -> the folder it is once links inside the project are followed
    (`folders.FolderResolver`): labels follow resolved paths. As written, without a tree."""


def normalized_folder(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/").strip("/")) or "."


def policy_of(paths: Mapping[str, str], servers: Mapping[str, tuple[Iterable[str] | None, Mapping[str, Iterable[str]]]],
              resolve: Callable[[str], str] | None = None) -> LabelPolicy:
    """The policy from project.json's `flows.paths` and each server's (`labels`, `tool_labels`);
    `resolve`: how links turn a project folder into another (`LabelPolicy.resolve`)."""
    resolve = resolve or LabelPolicy.resolve
    return LabelPolicy(
        paths={resolve(normalized_folder(p)): label for p, label in sorted(paths.items())},
        mcp_labels={s: None if labels is None else frozenset(labels) for s, (labels, _) in servers.items()},
        mcp_tool_labels={(s, t): frozenset(ls) for s, (_, tools) in servers.items() for t, ls in tools.items()},
        resolve=resolve,
    )


def _inside(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder + "/")


def _scope_folder(scope: str) -> tuple[str, str] | None:
    """(root, folder) of a stdlib file scope `project/docs/**` (`**/*.md` dropped); None when the
    scope is not under the project or the working directory."""
    head = scope.split("/**", 1)[0]
    root, _, sub = head.partition("/")
    if root not in ROOTS:
        return None
    return root, normalized_folder(sub or ".")


def _path_labels(scope: str, policy: LabelPolicy) -> tuple[str | None, set[str]]:
    """(the label of the folder the scope is in, the labels of folders inside the scope)."""
    found = _scope_folder(scope)
    if found is None or found[0] != "project":
        return None, set()
    folder = policy.resolve(found[1])
    own = folder_label(folder, policy.paths)
    inner = {label for p, label in policy.paths.items() if p != folder and _inside(p, folder)}
    return own, inner


def read_labels(scope: str, policy: LabelPolicy) -> frozenset[str]:
    """A read is private unless its folder is published or untrusted; a read that covers an
    untrusted (or private) folder has that label too."""
    own, inner = _path_labels(scope, policy)
    out = {PRIVATE if own in (None, PRIVATE) else UNTRUSTED} if own != PUBLISHED else set()
    out |= {UNTRUSTED for label in inner if label == UNTRUSTED} | {PRIVATE for label in inner if label == PRIVATE}
    return frozenset(out)


def write_labels(scope: str, policy: LabelPolicy) -> frozenset[str]:
    """A write is egress outside the project and the working directory, or into a published folder."""
    if _scope_folder(scope) is None:
        return frozenset({EGRESS})
    own, inner = _path_labels(scope, policy)
    return frozenset({EGRESS}) if own == PUBLISHED or PUBLISHED in inner else NONE


def mcp_labels(server: str, tool: str, policy: LabelPolicy) -> frozenset[str]:
    declared = policy.mcp_tool_labels.get((server, tool))
    if declared is not None:
        return declared
    labels = policy.mcp_labels.get(server)
    base = frozenset({UNTRUSTED, EGRESS}) if labels is None else labels
    return base | {EGRESS} if SENDING_NAME.match(tool) else base


def labels_of(capability: str, policy: LabelPolicy, *, stdlib: bool = False) -> frozenset[str]:
    """The labels of one capability `KIND:SCOPE` (not of `custom:NAME`: see `python_labels`).
    `stdlib`: granted by a stdlib toolset, whose shell policy runs no command that reaches the
    network; a process a Python tool declares may reach anything."""
    found = policy.memo.get((capability, stdlib))
    if found is None:
        found = policy.memo[(capability, stdlib)] = _labels_of(capability, policy, stdlib)
    return found


def _labels_of(capability: str, policy: LabelPolicy, stdlib: bool) -> frozenset[str]:
    kind, _, scope = capability.partition(":")
    if kind in LABEL_KINDS:
        return frozenset({kind})
    if kind == "fs.read":
        return read_labels(scope, policy)
    if kind == "fs.write":
        return write_labels(scope, policy)
    if kind == "net":
        return frozenset({UNTRUSTED, EGRESS})
    if kind == "proc.exec":
        return NONE if stdlib else frozenset({UNTRUSTED, EGRESS})
    if kind == "mcp":
        server, _, tool = scope.partition(":")
        return mcp_labels(server, tool, policy)
    if kind == "provider":
        return PROVIDER_LABELS.get(scope, NONE)
    return NONE


def provider_labels(kind: str) -> frozenset[str]:
    return PROVIDER_LABELS.get(kind, NONE)


UNKNOWN_CALL_LABELS = frozenset({UNTRUSTED, EGRESS})
"""A call into third-party code the effects table does not know may connect, as a connection does."""


def python_labels(effects: Iterable[str], *, reads: bool = False, unknown_calls: bool = False) -> frozenset[str]:
    """An undeclared Python tool's labels, from its code's effects; `reads`: it reads files (a
    private leg); `unknown_calls`: it calls third-party code the effects table does not know
    (`code.flow_calls`), which counts as a connection."""
    out: set[str] = {PRIVATE} if reads else set()
    for effect in effects:
        out |= EFFECT_LABELS.get(effect, NONE)
    return frozenset(out | UNKNOWN_CALL_LABELS if unknown_calls else out)


def sorted_labels(labels: Iterable[str]) -> list[str]:
    return [label for label in LABELS if label in labels]
