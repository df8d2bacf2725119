"""Loading a bundle for a run: verify it, then read only the nodes the run touches.

The lock's bytes are checked by `llm_do.bundle.reader.verify` (digest, canonical form, format
version) before anything is parsed; the hashes of the Python sources the run may import come next.
A bundle that passes was written by `llm-do build` exactly as it is, so its nodes are read as the
compiler wrote them (`llm_do.bundle.model`) into the views of `llm_do.bundle.views`, without
validating megabytes of JSON again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.bundle import reader
from llm_do.bundle.canonical import source_hash
from llm_do.bundle.errors import REBUILD, BundleRefused
from llm_do.bundle.reader import LockReader
from llm_do.bundle.regular_files import IrregularFile, read_regular_file
from llm_do.bundle.views import CallEdge, WorkerSpec, call_edges

if TYPE_CHECKING:
    from types import ModuleType

    from pydantic_ai import Agent, Tool
    from pydantic_ai.models import Model

    from llm_do.bundle.model import DefaultsNode, EntryFunctionNode, EntryNode, RuntimeNode, ToolsetNode

__all__ = ["BundleRefused", "LoadedBundle", "bundle_from_bytes", "load_bundle", "python_sources", "read_bundle"]


class LoadedBundle:
    """A verified bundle; its workers are read when first asked for."""

    def __init__(self, path: Path, text: LockReader, root: Path) -> None:
        self.path = path
        self.text = text
        self.root = root
        """The project root: the bundle's `root`, relative to the bundle's directory."""
        self.python_sources: dict[str, bytes] = {}
        """Relative path -> the bytes of every Python source, read once and verified at load:
        what the run imports (`verified_imports`), whatever the files say later."""
        self._workers: dict[str, WorkerSpec] = {}
        self._agent_era: bool | None = None
        self._services: dict[str, list[str]] | None = None
        self._mcp_server_keys: list[str] | None = None
        self.agents: dict[str, Agent[Any, object]] = {}
        """pydantic-ai Agents built from the workers: they hold nothing of a run, so every Runtime
        of this bundle shares them. Their dependencies are `call_scope.CallContext`, which names this
        module (so `Any` here)."""
        self.models: dict[str, Model] = {}
        """Models built from model names, shared by every Runtime of this bundle like the agents
        (a batch makes one Runtime per input)."""
        self.tools: dict[tuple[str, str], Tool[Any]] = {}
        """(module, tool name) -> the pydantic-ai `Tool` of a Python tool function, made once: its
        schema is read from the signature, and every worker call builds its toolsets again."""

    @property
    def entry(self) -> EntryNode:
        entry: EntryNode = self.text.get("entry")
        return entry

    @property
    def entry_function(self) -> EntryFunctionNode | None:
        """The entry function's node when the entry is one."""
        return self.entry.get("function")

    @property
    def runtime(self) -> RuntimeNode:
        runtime: RuntimeNode = self.text.get("runtime")
        return runtime

    @property
    def defaults(self) -> DefaultsNode:
        defaults: DefaultsNode | None = self.text.get("defaults")
        return defaults or {}

    def worker(self, name: str) -> WorkerSpec | None:
        spec = self._workers.get(name)
        if spec is None:
            node = self.text.member("workers", name)
            if node is None:
                return None
            spec = self._workers[name] = WorkerSpec.of(node)
        return spec

    def declared_services(self) -> dict[str, list[str]]:
        """The bundle's `services` (service -> the workers declaring it), {} when absent. Top-level
        keys are sorted and every bundle has `sources`, so an absent `services` is known from the
        bytes before `sources`, not from a search through every worker."""
        if self._services is None:
            data = self.text.data
            end = data.find(b'\n  "sources": ')
            present = data.find(b'\n  "services": ', 0, end if end >= 0 else len(data)) >= 0
            self._services = (self.text.get("services") or {}) if present else {}
        return self._services

    def worker_names(self) -> list[str]:
        return self.text.member_names("workers")

    def toolset(self, key: str) -> ToolsetNode | None:
        return self.text.member("toolsets", key)

    def call_edges(self) -> list[CallEdge]:
        """Every call edge (`llm_do.bundle.views.call_edges`); reads every worker node."""
        workers = {name: node for name in self.worker_names() if (node := self.text.member("workers", name)) is not None}
        return call_edges(workers, self.entry)

    def mcp_server_keys(self) -> list[str]:
        """The keys of the bundle's MCP server toolsets (none without reading any node when the
        bundle has no MCP server, the common case); found once, asked at every top-level call."""
        if self._mcp_server_keys is None:
            self._mcp_server_keys = [] if b'"kind": "mcp"' not in self.text.section_bytes("toolsets") else [
                k for k in self.text.member_names("toolsets") if (node := self.toolset(k)) and node.get("kind") == "mcp"]
        return self._mcp_server_keys

    @property
    def agent_era(self) -> bool:
        """Built from `.agent` files (spec/legacy.md): the project's Python is of pydantic-ai 1.x."""
        if self._agent_era is None:  # a search of the bytes: decoding thousands of names costs 100 ms
            self._agent_era = b'.agent": {' in self.text.section_bytes("sources")
        return self._agent_era

    def import_module(self, name: str) -> ModuleType:
        """Module `name` for this run: a project module from its verified bytes, anything else as
        Python imports it. Raises `BundleRefused` for a project module that is not verified.
        The Python of an `.agent`-era project gets pydantic-ai 1.x's tools (`legacy_tools`)."""
        if self.agent_era:
            from .legacy_tools import enable

            enable(str(self.root))  # idempotent: the roots are a set, the patch made once
        if not self.python_sources:
            import importlib

            return importlib.import_module(name)
        from .verified_imports import import_verified

        return import_verified(self, name)


def load_bundle(path: Path, *, as_built: bool = False) -> LoadedBundle:
    """Read and verify a bundle, and, where its project is beside it, check that it is the build of
    those sources (`built_lock`; `as_built`: run it anyway, with a `StaleLockWarning`). Raises
    `BundleRefused` with one line saying why."""
    bundle = read_bundle(path)
    from .built_lock import check_built

    check_built(bundle.path, bundle.text.data, bundle.root, bundle.text.get("sources") or {}, as_built=as_built)
    return bundle


def read_bundle(path: Path) -> LoadedBundle:
    """Read and verify a bundle as a file (digest, form, format, Python sources), without comparing
    it with its project: for the CLI, which compares it itself (`llm_do.cli.lock_check`)."""
    return _loaded(reader.read(path), path)


def bundle_from_bytes(data: bytes, path: Path) -> LoadedBundle:
    """A bundle held in memory (`llm-do run`); `path` is where it would live, for its `root`."""
    return _loaded(reader.verify(data, path), path)


def _loaded(text: LockReader, path: Path) -> LoadedBundle:
    """A verified lock's bundle, once its Python sources are verified too."""
    root = (path.parent / (text.get("root") or ".")).resolve()
    bundle = LoadedBundle(path, text, root)
    _verify_python_sources(bundle)
    return bundle


_PYTHON_KIND = b'": {\n      "kind": "python",\n      "sha256": "'


def python_sources(text: LockReader) -> dict[str, str]:
    """Relative path -> recorded hash of every Python source of the bundle, found by their
    canonical lines rather than by decoding the thousands of other sources; when the lines are
    laid out otherwise (a key between `kind` and `sha256`, say), the section is decoded instead,
    so no layout makes the check pass without looking."""
    section = text.section_bytes("sources")
    out: dict[str, str] = {}
    at = section.find(_PYTHON_KIND)
    while at >= 0:
        key_start = section.rfind(b'\n    "', 0, at) + 5
        value_start = at + len(_PYTHON_KIND)
        value_end = section.find(b'"', value_start)
        out[json.loads(section[key_start : at + 1])] = section[value_start:value_end].decode()
        at = section.find(_PYTHON_KIND, value_end)
    if section.count(b'"kind": "python"') != len(out):  # a layout the scan does not know: read it all
        entries = json.loads(section)
        out = {rel: entry.get("sha256", "") for rel, entry in entries.items()
               if isinstance(entry, dict) and entry.get("kind") == "python"}
    return out


def _verify_python_sources(bundle: LoadedBundle) -> None:
    """Python is the one input besides the bundle: read each source once, refuse code that changed
    since the build, and keep the verified bytes, which are what the run executes."""
    try:
        sources = python_sources(bundle.text)
    except (ValueError, AttributeError):
        raise BundleRefused(f"{bundle.path}: refused: its sources cannot be read; {REBUILD}") from None
    for rel, recorded in sources.items():
        try:
            data = read_regular_file(bundle.root / rel)
        except IrregularFile as exc:
            raise BundleRefused(f"{bundle.path}: refused: {rel} is {exc}; {REBUILD}") from None
        except OSError:
            raise BundleRefused(f"{bundle.path}: stale: {rel} is missing since the build; {REBUILD}") from None
        if source_hash(data) != recorded:
            raise BundleRefused(f"{bundle.path}: stale: {rel} changed since the build; {REBUILD}")
        bundle.python_sources[rel] = data
    if sources:
        from llm_do.toolkit.user_code import first_shadow

        shadow = first_shadow(bundle.root, list(sources))
        if shadow is not None:
            raise BundleRefused(f"{bundle.path}: refused: {shadow}; remove it or {REBUILD}")
