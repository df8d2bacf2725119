"""Which paths a tool call read that the project keeps in: labelled private (project.json
`flows.paths`, or by default: a read of the project is private unless its folder is published or
untrusted), or denied by an approval rule of the project. What such a call returned is in the
cassette, so `--record` warns about each path once and lists it in the cassette's `alerts`.

A read is known by the worker's `fs.read` grants for the tool (the stdlib filesystem toolsets): the
path is the call's `path` below the grant's folder; a tool without a `path` argument reads its
grant's folder."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from llm_do.bundle.approval import DENY, decide
from llm_do.bundle.flow import PRIVATE, folder_label

if TYPE_CHECKING:
    from llm_do.bundle.views import WorkerSpec

    from ..bundle import LoadedBundle

Why = Literal["private", "denied"]


def sensitive_reads(bundle: LoadedBundle, worker: str, tool: str, args: Mapping[str, object]) -> list[tuple[str, Why]]:
    """(path, why) of each path the call of `tool` by `worker` read that is private or denied."""
    node = bundle.text.member("workers", worker) or {}
    labels = (bundle.text.get("flows") or {}).get("paths") or {}
    path = args.get("path")
    given = path if isinstance(path, str) else None
    out: list[tuple[str, Why]] = []
    for grant in node.get("capabilities") or []:
        kind, _, scope = str(grant.get("capability", "")).partition(":")
        if grant.get("tool") != tool or kind != "fs.read":
            continue
        root, _, folder = scope.split("/**", 1)[0].partition("/")
        below = posixpath.normpath(given.replace("\\", "/")) if given is not None else "."
        inside = posixpath.normpath(posixpath.join(folder or ".", below))
        if root == "project" and not inside.startswith(".."):
            shown, private = inside, folder_label(inside, labels) in (None, PRIVATE)
        else:
            shown, private = f"{root}/{inside}", PRIVATE in (grant.get("labels") or [])
        if _denied_elsewhere(bundle, worker, tool, {**args, "path": below} if given is not None else args):
            out.append((shown, "denied"))
        elif private:
            out.append((shown, "private"))
    return out


def attached_read(bundle: LoadedBundle, worker: str, path: str) -> tuple[str, Why] | None:
    """Whether a file `worker` attached to a worker call (`path`, in the project) is private or
    denied, as the gate judges an attachment: read by one of the worker's own reading tools whose
    grant's folder holds it, as that tool's read of it (the first such grant that says so)."""
    node = bundle.text.member("workers", worker) or {}
    target = posixpath.normpath(path.replace("\\", "/"))
    for grant in node.get("capabilities") or []:
        kind, _, scope = str(grant.get("capability", "")).partition(":")
        root, _, folder = scope.split("/**", 1)[0].partition("/")
        below = posixpath.relpath(target, folder or ".")
        if kind != "fs.read" or root != "project" or below.startswith("..") or target.startswith(".."):
            continue
        found = sensitive_reads(bundle, worker, str(grant.get("tool")), {"path": below})
        if found:
            return found[0]
    return None


def _denied_elsewhere(bundle: LoadedBundle, worker: str, tool: str, judged: Mapping[str, object]) -> bool:
    """Whether a rule of any worker for the same tool of the same toolset, rooted at the same folder,
    denies this call (this worker's own rules let it run, or it would not have read anything)."""
    spec = bundle.worker(worker)
    own = spec.tools.get(tool) if spec is not None else None
    if spec is None or own is None:
        return False
    settings = _settings(spec, own.toolset)
    for name in bundle.worker_names():
        other = bundle.worker(name)
        binding = other.tools.get(tool) if other is not None else None
        if other is None or binding is None or binding.toolset != own.toolset or not binding.rules or _settings(other, own.toolset) != settings:
            continue
        if decide(binding.rules, judged, binding.default or binding.approval) == DENY:
            return True
    return False


def _settings(spec: WorkerSpec, toolset: str | None) -> Mapping[str, object] | None:
    """The worker's settings for the toolset (where its root is)."""
    return next((use.settings for use in spec.toolsets if use.toolset == toolset), None)
