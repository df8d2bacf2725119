"""What a lint reported from the inputs it read, so `llm-do lint` of a project that did not change
since compiles nothing and reports the same diagnostics: a pre-commit hook or an editor's lint on
save costs what a no-op `build` costs.

A lint record is a build record (`build_record`) without a lock: found by the project's place, the
options that change what a lint finds (`--no-import`), llm-do's code, the interpreter and what
shapes `sys.path`; holding the listing of the tree taken before the lint (without llm-do's state
folder when the lint could have found nothing there: `state_left_out`), every file it read with
its stamp, the checks of the introspection answers it used, and its diagnostics. It holds when all
of that still does, as a build record does. Lints with errors, and projects with MCP servers (whose
tools are listed live), are not recorded. Standard library only until a record is found.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.provenance.build_record import changed_files, compiler_material, keep_record
from llm_do.provenance.tree_listing import Listing
from llm_do.provenance.user_cache import SignedEntries, cache_folder

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic
    from ..pipeline import CompileResult

FOLDER = "lints"
MAX_BYTES = 16 * 1024 * 1024


def lint_records() -> SignedEntries | None:
    """The user's lint records; None when caching is off (`LLM_DO_NO_CACHE`) or there is no cache directory."""
    folder = cache_folder(FOLDER)
    return None if folder is None else SignedEntries(folder, max_bytes=MAX_BYTES)


def recall_lint(records: SignedEntries, root: Path, *, import_python: bool) -> list[Diagnostic] | None:
    """The diagnostics a lint of the project at `root` reports now, when its record still holds; else None."""
    body = records.read(_material(root, import_python))
    if not isinstance(body, dict) or not isinstance(body.get("diagnostics"), list):
        return None
    if changed_files(body, root, None) != {}:
        return None
    from ..diagnostics import recorded_diagnostics

    return recorded_diagnostics(body["diagnostics"])


def keep_lint(records: SignedEntries, root: Path, listing: Listing, result: CompileResult, *, import_python: bool) -> None:
    """Record the lint `result` of the project at `root` (`listing`: its tree, taken before the lint
    read anything), when a later lint can tell that it still holds."""
    inputs = result.recorded_inputs()
    if result.loaded.root != root or inputs is None or not result.ok:
        return
    files, import_checks = inputs
    from .state_left_out import state_left_out

    keep_record(records, _material(root, import_python), root, listing=listing, files=files,
                import_checks=import_checks, diagnostics=[d.as_json() for d in result.diagnostics],
                left_out=state_left_out(result, listing, None))


def _material(root: Path, import_python: bool) -> dict[str, Any]:
    return {**compiler_material(root), "lint": {"import": import_python}}
