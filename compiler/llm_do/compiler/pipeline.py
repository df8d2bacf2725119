"""The compiler pipeline: load -> parse -> introspect -> resolve -> check -> render -> lower -> emit.

User errors never escape as exceptions: each stage returns data and diagnostics, and the stages
after a failed one run where they can, so one lint reports every problem at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.provenance.build_record import recorded_manifest

from . import codes
from .cache.front_matter_cache import FrontMatterCache
from .cache.packs import user_packs
from .codes import RULES
from .diagnostics import Diagnostic, diagnostic, has_errors, sorted_diagnostics
from .facts.cache import user_cache
from .stages.check import check
from .stages.entry_mark import apply_entry_mark
from .stages.introspect import collect_refs, entry_function_ref, introspect
from .stages.load import LoadedProject, load, read_sources
from .stages.parse import ParsedWorker, parse_worker
from .stages.render import render_instructions
from .stages.resolve import resolve
from .stages.resolved import ResolvedProject, Unknowns
from .syntax.position_bounds import within_files
from .syntax.sources import normalized
from .syntax.worker_forms import default_worker_name

if TYPE_CHECKING:
    from .facts.answers import McpServerFact


@dataclass
class CompileResult:
    loaded: LoadedProject
    diagnostics: list[Diagnostic] = field(default_factory=list)
    resolved: ResolvedProject | None = None
    bundle: bytes | None = None
    import_checks: list[dict[str, Any]] | None = None
    """The checks of the introspection answers the build used (`llm_do.provenance.import_checks`); None when
    an answer was used that nothing can tell is still true (no cache, or it could not be kept)."""
    front_matter_reused: int = 0
    """How many workers' front matter was taken as the last build read it (`cache.front_matter_cache`)."""
    spliced: int = 0
    """How many nodes of the bundle were written from the text the last build kept (`cache.splice`)."""

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)

    def recorded_inputs(self) -> tuple[dict[str, str], list[dict[str, Any]]] | None:
        """What a build or lint record of this compile depends on (`build_record`, `lint_record`):
        every file it read, by source hash, and the checks of its introspection answers; None when a
        record could not tell later that it still holds (a manifest other than project.json, MCP
        servers, whose tools are listed live, or an introspection answer that could not be kept)."""
        manifest = self.loaded.manifest
        if (manifest is None or manifest.mcp_servers or self.import_checks is None
                or not recorded_manifest(self.loaded.manifest_file)):
            return None
        sources = self.loaded.sources
        return {**sources.also_read, **{rel: source.sha256 for rel, source in sources.files.items()}}, self.import_checks


def compile_project(
    path: Path, *, import_python: bool = True, lock_dir: Path | None = None, emit_bundle: bool = True,
    cache: bool = True, listed: Mapping[str, McpServerFact] | None = None, review: bool = False,
) -> CompileResult:
    """Compile the project at `path` (a directory or its project.json).

    `cache`: take the introspection of Python that did not change from the user's cache (see
    `facts.cache`), and the text of the lock's nodes that did not change (`cache.splice`);
    `LLM_DO_NO_CACHE` turns it off too. `listed`: remote MCP servers already listed, not reached
    (`stages.mcp_servers.list_servers`). `review`: also the checks of the whole project that
    `lint` makes and `build` does not (`stages.check.cost`).

    Raises `ProjectNotFound` when the path names no project (a usage error, not a finding).
    `lock_dir` is where the lock will live (for the bundle's relative `root`).
    """
    loaded, diagnostics = load(path)
    result = CompileResult(loaded)
    if loaded.manifest is None:
        result.diagnostics = sorted_diagnostics(within_files(diagnostics, loaded.sources.files, loaded.root))
        return result
    parsed: list[ParsedWorker] = []
    packs = user_packs() if cache else None
    front_matter = FrontMatterCache(packs, loaded.root) if packs is not None else None
    for source in read_sources(loaded, diagnostics):
        worker, found = parse_worker(source, front_matter.load) if front_matter is not None else parse_worker(source)
        diagnostics.extend(found)
        if worker is not None:
            parsed.append(worker)
    if front_matter is not None:
        front_matter.save()
        result.front_matter_reused = front_matter.reused
    diagnostics.extend(apply_entry_mark(loaded, parsed))
    unknowns = _unknowns(loaded, parsed)
    refs, found = collect_refs(parsed)
    diagnostics.extend(found)
    function_ref, found = entry_function_ref(loaded)
    diagnostics.extend(found)
    entry = None if function_ref else next((w for w in parsed if w.name == loaded.manifest.entry_worker), None)
    facts_cache = user_cache() if cache else None
    facts = introspect(loaded, refs, refs.get(entry, "schema_in_ref") if entry else None, import_python=import_python,
                       entry_function=function_ref, cache=facts_cache)
    if facts_cache is not None and not facts_cache.untracked:
        result.import_checks = facts_cache.used_checks
    mcp_facts = None
    if loaded.manifest.mcp_servers:
        from .stages.mcp_servers import list_servers  # a project without MCP servers does not load them

        mcp_facts = list_servers(loaded, import_python=import_python, listed=listed)
    resolved, found = resolve(loaded, parsed, refs, facts, unknowns, function_ref, mcp_facts, import_python=import_python)
    diagnostics.extend(found)
    result.resolved = resolved
    diagnostics.extend(check(resolved))
    if review:
        from .stages.check.cost import check_costs  # lint only: see its docstring

        diagnostics.extend(check_costs(resolved))
    instructions, found = render_instructions(resolved)
    diagnostics.extend(_without_template_follow_ons(loaded, found))
    diagnostics = _apply_suppressions(loaded, diagnostics)
    result.diagnostics = sorted_diagnostics(within_files(diagnostics, loaded.sources.files, loaded.root))
    if emit_bundle and result.ok:
        from .cache.splice import emit_spliced  # lower and emit: not for `lint`, which emits no bundle
        from .stages.emit import emit
        from .stages.lower import lower

        lock_at = (lock_dir or loaded.root).resolve()
        doc = lower(resolved, instructions, lock_at)
        if packs is None:
            result.bundle = emit(doc)
        else:
            result.bundle, result.spliced = emit_spliced(doc, packs, loaded.root, lock_at)
    return result


def _unknowns(loaded: LoadedProject, parsed: list[ParsedWorker]) -> Unknowns:
    """What the errors of load and parse left unknown, so resolve does not report it again."""
    assert loaded.manifest is not None
    read = {w.file for w in parsed}
    listed_python = len({normalized(p) for p in loaded.manifest.python_files})
    readable_python = sum(1 for p in loaded.python_files if p in loaded.sources.files)
    dropped = loaded.manifest_incomplete
    return Unknowns(
        workers=frozenset(default_worker_name(f) for f in loaded.worker_files if f not in read),
        python=readable_python < listed_python or "python_files" in dropped,
        any_worker="worker_files" in dropped,
        entry="entry" in dropped,
    )


def _without_template_follow_ons(loaded: LoadedProject, found: list[Diagnostic]) -> list[Diagnostic]:
    """Templates see only `vars`: when an error dropped it, "undefined variable" is its follow-on."""
    if "vars" not in loaded.manifest_incomplete:
        return found
    return [d for d in found if d.code != codes.UNDEFINED_VARIABLE.code]


def _apply_suppressions(loaded: LoadedProject, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    manifest = loaded.manifest
    if manifest is None or not manifest.suppress:
        return diagnostics
    silenced: set[str] = set()
    for i, code in enumerate(manifest.suppress):
        rule = RULES.get(code.upper())
        if rule is None:
            diagnostics.append(diagnostic(codes.INVALID_SUPPRESSION,
                                          f"'{code}' is not a diagnostic code", loaded.at("suppress", i, key=False)))
        elif rule.severity == "error":
            diagnostics.append(diagnostic(codes.INVALID_SUPPRESSION, f"{rule.code} is an error and cannot be suppressed",
                                          loaded.at("suppress", i, key=False)))
        else:
            silenced.add(rule.code)
    return [d for d in diagnostics if d.code not in silenced]
