"""Where `llm-do build` spends its time: imports and each compiler stage, in one process.

    python bench/stages.py                    # the generated 3000-worker project
    python bench/stages.py --workers 300 --repeat 5

Not a benchmark of the whole command (build_bench.py is): a breakdown to find what to make faster.
Imports are timed once (the first import is the one a `llm-do build` process pays); stages are run
`--repeat` times on the same project and the minimum CPU time of each is shown, so other work on
the machine disturbs the figures little. The stages are called as `compile_project` calls them.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from _common import machine, table
from generate import DEFAULT_OUT, generate_project


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    clock = time.process_time
    imports: list[tuple[str, float]] = []

    def imp(label: str, fn) -> None:
        t = clock()
        fn()
        imports.append((label, clock() - t))

    imp("click + llm_do.cli.main", lambda: __import__("llm_do.cli.main"))
    imp("llm_do.compiler.pipeline (build)", lambda: __import__("llm_do.compiler.pipeline"))
    imp("llm_do.compiler.build.lock_check (build --check, beyond build)", lambda: __import__("llm_do.compiler.build.lock_check"))
    imp("jinja2 sandbox (first templated body)", lambda: __import__("jinja2.sandbox"))
    imp("llm_do.compiler.report.diagnostics.text (printing)", lambda: __import__("llm_do.compiler.report.diagnostics.text"))

    from llm_do.compiler.build.lock_check import check_lock
    from llm_do.compiler.stages.check import check
    from llm_do.compiler.stages.emit import emit
    from llm_do.compiler.stages.introspect import collect_refs, introspect
    from llm_do.compiler.stages.load import load, read_sources
    from llm_do.compiler.stages.lower import lower
    from llm_do.compiler.stages.parse import parse_worker
    from llm_do.compiler.stages.render import render_instructions
    from llm_do.compiler.stages.resolve import resolve

    root = args.out / f"workers-{args.workers}"
    if not (root / "bundle.lock").exists():
        generate_project(root, args.workers)
        from llm_do.compiler.pipeline import compile_project
        from llm_do.compiler.stages.emit import write_atomic

        write_atomic(root / "bundle.lock", compile_project(root).bundle)

    times: dict[str, list[float]] = defaultdict(list)

    def timed(label: str, fn, *a, **k):
        t = clock()
        out = fn(*a, **k)
        times[label].append(clock() - t)
        return out

    def read_all(loaded, diagnostics):
        return list(read_sources(loaded, diagnostics))

    def parse_all(sources):
        return [parse_worker(s)[0] for s in sources]

    def check_all(resolved):
        return list(check(resolved))

    for _ in range(args.repeat):
        loaded, diagnostics = timed("load", load, root)
        sources = timed("read_sources", read_all, loaded, diagnostics)
        parsed = timed("parse", parse_all, sources)
        refs, _ = timed("collect_refs", collect_refs, parsed)
        facts = timed("introspect", introspect, loaded, refs, None, import_python=True)
        resolved, _ = timed("resolve", resolve, loaded, parsed, refs, facts)
        timed("check", check_all, resolved)
        instructions, _ = timed("render_instructions", render_instructions, resolved)
        doc = timed("lower", lower, resolved, instructions, loaded.root.resolve())
        timed("emit", emit, doc)
        timed("check_lock (build --check)", check_lock, root)

    templated = sum(1 for w in resolved.workers.values() if "{" in w.parsed.body)
    print(f"build stages, {args.workers} workers ({templated} bodies with template syntax); CPU time; {machine()}")
    print()
    rows = [[label, f"{t * 1000:.1f} ms"] for label, t in imports]
    print(table(["import (once)", "cpu"], rows))
    print()
    compile_total = 0.0
    rows = []
    for label, ts in times.items():
        best = min(ts)
        if not label.startswith("check_lock"):
            compile_total += best
        rows.append([label, f"{best * 1000:.1f} ms", f"{best / args.workers * 1e6:.0f} us"])
    rows.insert(-1, ["compile_project total", f"{compile_total * 1000:.1f} ms", f"{compile_total / args.workers * 1e6:.0f} us"])
    print(table([f"stage (min of {args.repeat})", "cpu", "per worker"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
