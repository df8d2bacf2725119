"""What a durable run remembers of its command line, so that `llm-do resume ID` works as printed:
the options that decide how it runs (`--script` and `--strict-script`, `--model`, the approval
mode, `--max-cost` and `--accept-unpriced`), kept in the run's record, and the `--db` the printed `resume` needs when it is not where
`resume` looks by default. None of them is a secret; API keys and the environment never go in
the record, and a database password is never printed."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from .options import RunOptions

FLAGS = {"approve_all": "--approve-all", "reject_all": "--reject-all"}


def remembered(opts: RunOptions) -> dict[str, object]:
    """The options the run's record keeps (a script by its absolute path: `resume` may run elsewhere)."""
    kept: dict[str, object] = {}
    if opts.script is not None:
        kept["script"] = str(opts.script.resolve())
        kept["strict_script"] = opts.strict_script
    if opts.model is not None:
        kept["model"] = opts.model
    if opts.approvals is not None:
        kept["approvals"] = opts.approvals
    if opts.max_cost is not None:
        kept["max_cost"] = opts.max_cost
        kept["accept_unpriced"] = opts.accept_unpriced
    return kept


def taken(opts: RunOptions, kept: object) -> tuple[RunOptions, list[str]]:
    """The options `resume` runs with: those given on its command line, and the run's remembered ones
    for what it does not give (a model or script given replaces both); with the words saying
    which it took. A record without options (an older run) gives nothing."""
    if not isinstance(kept, dict):
        return opts, []
    said: list[str] = []
    if opts.model is None and opts.script is None:
        script, model = kept.get("script"), kept.get("model")
        if isinstance(script, str):
            strict = kept.get("strict_script") is True and not opts.strict_script
            opts = replace(opts, script=Path(script), strict_script=opts.strict_script or strict)
            said += [f"--script {shlex.quote(script)}"] + (["--strict-script"] if strict else [])
        elif isinstance(model, str):
            opts = replace(opts, model=model)
            said.append(f"--model {shlex.quote(model)}")
    approvals = kept.get("approvals")
    if opts.approvals is None and approvals in FLAGS:
        opts = replace(opts, approvals="approve_all" if approvals == "approve_all" else "reject_all")
        said.append(FLAGS[str(approvals)])
    max_cost = kept.get("max_cost")
    if opts.max_cost is None and isinstance(max_cost, (int, float)) and not isinstance(max_cost, bool) and max_cost > 0:
        accept = kept.get("accept_unpriced") is True and not opts.accept_unpriced
        opts = replace(opts, max_cost=float(max_cost), accept_unpriced=opts.accept_unpriced or accept)
        said += [f"--max-cost {max_cost}"] + (["--accept-unpriced"] if accept else [])
    return opts, said


def resume_command(run_id: str, db: str | None) -> str:
    """`llm-do resume ID`, with `--db` when `db` is given (the URL, its password left out)."""
    words = ["llm-do", "resume", run_id]
    if db:
        words += ["--db", without_password(db)]
    return shlex.join(words)


def without_password(url: str) -> str:
    """A DB URL as it may be printed: a password in it becomes `***` (give it again yourself)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    user = f"{parts.username}:***@" if parts.username else ":***@"
    netloc = user + host + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
