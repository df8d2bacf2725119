"""`llm-do migrate [PROJECT] [--dry-run]`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from llm_do.compiler.legacy.migrate import cyclic_workers, plan_migration
from llm_do.compiler.stages.emit import write_atomic

from ..compile_options import no_cache_option
from ..errors import ExitCode, usage_problem
from ._compile import as_report, compile_or_exit, print_diagnostics


@click.command()
@click.argument("project", default=".", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Write nothing; list the files that would be written or removed (no contents).")
@no_cache_option
def migrate(project: Path, dry_run: bool, no_cache: bool) -> int:
    """Rewrite a project of the .agent era to .worker files and today's project.json."""
    before = compile_or_exit(project, emit_bundle=False, cache=not no_cache)
    loaded = before.loaded
    agent_files = [f for f in loaded.worker_files if f.endswith(".agent")]
    names = {}
    if before.resolved:
        names = {w.parsed.file: w.name for w in before.resolved.workers.values()}
    manifest = loaded.sources.files.get(loaded.manifest_file)
    try:
        plan = plan_migration(loaded.root, manifest.text if manifest and not loaded.implicit else None, agent_files,
                              cyclic_workers(before.resolved), names)
    except (OSError, ValueError) as exc:
        raise usage_problem(f"cannot migrate: {exc}") from None
    if not agent_files and (manifest is None or json.loads(plan.writes.get(loaded.manifest_file, "null") or "null")
                            == json.loads(manifest.text)):
        click.echo("nothing to migrate: no .agent files and no .agent-era keys", err=True)
        return ExitCode.OK
    for rel in sorted(plan.writes):
        click.echo(f"{'would write' if dry_run else 'write'} {rel}", err=True)
    for rel in plan.deletes:
        click.echo(f"{'would remove' if dry_run else 'remove'} {rel}", err=True)
    for note in plan.notes:
        click.echo(f"note: {note}", err=True)
    if dry_run:
        return ExitCode.OK
    try:
        for rel, text in plan.writes.items():
            write_atomic(loaded.root / rel, text.encode())
        for rel in plan.deletes:
            if rel not in plan.writes:
                (loaded.root / rel).unlink()
    except OSError as exc:
        raise usage_problem(f"cannot write: {exc.strerror}") from None
    after = compile_or_exit(project, emit_bundle=False, cache=not no_cache)
    print_diagnostics([as_report(project.as_posix(), after)])
    click.echo("migrated; check the result with `llm-do build`" if after.ok else "migrated, with errors left to fix", err=True)
    return ExitCode.OK if after.ok else 1
