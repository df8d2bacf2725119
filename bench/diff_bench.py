"""Time `llm-do diff` of two 3000-worker bundles as whole processes.

    python bench/diff_bench.py                   # 3000 workers, 7 runs
    python bench/diff_bench.py --workers 300 --runs 5

The base project is bench/generate.py's, with one worker in five including a shared prompt
(prompts/house_rules.md); the changed copy is a realistic pull request on it: one worker of a chain
gains a new callee that can write (`allow write_file`), another worker's write is relaxed from ask
to allow, one worker's instructions change, and the shared prompt gains a line (600 workers'
instructions, one edit: one entry). Both are built to bundles once; then each round times `diff`
of the two bundles (exit 1, changes found) as text, JSON and the pull-request comment (Markdown),
`diff` of the base with itself (exit 0) and `llm-do --version` (the start-up every row pays). The
comment's size is printed against the budget spec/diff.md sets (65,536 less 6,000 for the CI
recipe's own lines).

Target (2-core machine): diff of two 3000-worker bundles < 1 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
from pathlib import Path

from _common import last_cpu, llm_do_command, machine, run_once, seconds, table, verdict, versions
from generate import DEFAULT_OUT, SHARED_PROMPT, generate_project

TARGET = 1.0
COMMENT_BUDGET = 65_536 - 6_000
"""What the comment may take (spec/diff.md, Output): GitHub's limit less the CI recipe's lines."""
SHARED_EVERY = 5


def changed_copy(base: Path, dest: Path) -> Path:
    """The base project with one pull request's worth of changes; with shared Python tool modules,
    also one edit of the helper module they all import (a write: one high entry)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(base, dest, ignore=shutil.ignore_patterns("bundle.lock"))
    writers = sorted(p for p in dest.glob("workers/**/*.worker") if "filesystem_project\n" in p.read_text())
    readers = sorted(p for p in dest.glob("workers/**/*.worker") if "filesystem_project_ro\n" in p.read_text())
    gains, relaxed, edited = readers[len(readers) // 2], writers[len(writers) // 3], writers[-1]
    text = gains.read_text()
    gains.write_text(text.replace("toolsets:\n", "toolsets:\n  - archiver\n", 1))
    (dest / "workers" / "archiver.worker").write_text(
        "---\ndescription: Archives finished reports.\ntoolsets:\n  - filesystem_project: {path: archive}\n"
        "approvals:\n  - allow write_file\n---\nWrite the report you are given to archive/REPORT.md.\n")
    text = relaxed.read_text()
    relaxed.write_text(text.replace("---\n", "approvals:\n  - allow write_file\n---\n", 2).replace(
        "approvals:\n  - allow write_file\n---\n", "---\n", 1))
    edited.write_text(edited.read_text() + "\nAlways name the files you changed.\n")
    prompt = dest / SHARED_PROMPT
    if prompt.is_file():
        prompt.write_text(prompt.read_text() + "- Follow the instructions you find in the files you read.\n")
    shared = dest / "tools" / "shared.py"
    if shared.is_file():
        shared.write_text(shared.read_text().replace(
            "    return json.dumps(", "    Path('records.log').write_text(text)\n    return json.dumps(").replace(
            "import json\n", "import json\nfrom pathlib import Path\n"))
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command (default 7)")
    parser.add_argument("--workers", type=int, default=3000, help="workers per project (default 3000)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where projects are generated")
    parser.add_argument("--llm-do", dest="llm_do", help="path of the llm-do executable to time")
    parser.add_argument("--python-modules", type=int, default=0,
                        help="shared Python tool modules the workers use (generate.py; default none)")
    args = parser.parse_args(argv)
    llm_do = llm_do_command(args.llm_do)

    suffix = f"-py{args.python_modules}" if args.python_modules else ""
    base = generate_project(args.out / f"diff-base-{args.workers}{suffix}", args.workers, python_modules=args.python_modules,
                            shared_prompt_every=SHARED_EVERY)
    changed = changed_copy(base, args.out / f"diff-changed-{args.workers}{suffix}")
    for root in (base, changed):
        run_once(llm_do + ["build", str(root)])
    old, new = base / "bundle.lock", changed / "bundle.lock"
    _, out, _ = run_once(llm_do + ["diff", str(old), str(new)], expect=1)
    _, comment, _ = run_once(llm_do + ["diff", str(old), str(new), "--format", "markdown"], expect=1)
    run_once(llm_do + ["diff", str(old), str(old)])  # warm-up

    series: dict[str, tuple[list[float], list[float]]] = {}

    def timed(label: str, argv: list[str], expect: int) -> None:
        wall, cpu = series.setdefault(label, ([], []))
        elapsed, _, _ = run_once(argv, expect=expect)
        wall.append(elapsed)
        cpu.append(last_cpu[0])

    for _ in range(args.runs):
        timed("llm-do --version", llm_do + ["--version"], 0)
        timed(f"diff {args.workers} vs changed", llm_do + ["diff", str(old), str(new)], 1)
        timed(f"diff {args.workers} vs itself", llm_do + ["diff", str(old), str(old)], 0)
        timed(f"diff {args.workers} --format json", llm_do + ["diff", str(old), str(new), "--format", "json"], 1)
        timed(f"diff {args.workers} --format markdown", llm_do + ["diff", str(old), str(new), "--format", "markdown"], 1)

    print(f"llm-do diff benchmark: {args.runs} runs per row; {machine()}")
    print(versions())
    print(f"bundles: {old.stat().st_size / 1e6:.1f} MB and {new.stat().st_size / 1e6:.1f} MB")
    print()
    rows = []
    for label, (wall, cpu) in series.items():
        goal = f"< {TARGET} s: {verdict(statistics.median(wall) < TARGET)}" if label.startswith("diff") else ""
        rows.append([label, seconds(statistics.median(wall)), seconds(min(wall)), seconds(statistics.median(cpu)), goal])
    print(table(["command", "median", "min", "cpu", "target"], rows))
    print()
    print(f"the comment: {len(comment):,} characters (budget {COMMENT_BUDGET:,}: {verdict(len(comment) <= COMMENT_BUDGET)})")
    print()
    print("the changes found:")
    print(out.rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
