"""What the information-flow analysis adds to `build`: a generated project of N workers (3000 by
default) where all three legs are present (every worker reads the project: private; the run's
input is untrusted; every 10th worker has a Python tool whose code opens a connection: untrusted
and egress, asked by default, so every flow is gated and lint reports it as R005).

    python bench/flow_bench.py                  # 3000 workers, 7 rounds
    python bench/flow_bench.py --sizes 300,3000 --runs 5

Each round builds the project in this process twice, in alternating order: once as `llm-do
build` does, and once with the flow work taken out (the rule R003-R006 and the grant labels
replaced by no-ops: the baseline is the same code without the feature). The gain is the ratio of
the medians minus 1; target under 5%. The time of the rule itself (the analysis, inside the
build with flows) is shown beside it as a share of the build, a figure less exposed to the
machine's load than the difference of two medians. The introspection cache is warm (one build before timing),
as for a developer's repeated builds.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

from _common import machine, table, verdict, versions
from generate import DEFAULT_OUT, generate_project

TARGET = 0.05
POST_TOOL = '''"""A tool whose code opens a connection: labelled untrusted and egress by its effects."""

import urllib.request


def post_update(url: str, text: str) -> str:
    """Post a short update."""
    with urllib.request.urlopen(url, data=text.encode()) as response:
        return response.read().decode()


TOOLS = [post_update]
'''


def flow_project(root: Path, n: int) -> Path:
    generate_project(root, n)
    (root / "flow_tools.py").write_text(POST_TOOL)
    manifest = json.loads((root / "project.json").read_text())
    manifest["python_files"] = [*manifest.get("python_files", []), "flow_tools.py"]
    manifest["suppress"] = sorted({*manifest.get("suppress", []), "Y007"})
    (root / "project.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for i, path in enumerate(sorted(root.rglob("*.worker"))):
        if i % 10 == 0:
            text = path.read_text()
            head, sep, body = text.partition("\n---\n")
            path.write_text(head + "\ntools:\n  - post_update" + sep + body if "\ntools:" not in head
                            else text.replace("\ntools:\n", "\ntools:\n  - post_update\n", 1))
    return root


@contextlib.contextmanager
def without_flows() -> Iterator[None]:
    """The build with the flow work replaced by no-ops (the baseline)."""
    from llm_do.compiler.analysis import capability_grants
    from llm_do.compiler.analysis.flows.labels import NONE
    from llm_do.compiler.stages.check import capabilities

    saved = (capabilities.check_flows, capability_grants.capability_labels, capability_grants.python_tool_labels,
             capability_grants.opaque_python_labels, capability_grants.opaque_mcp_labels)
    capabilities.check_flows = lambda *args: []  # type: ignore[assignment]
    for name in ("capability_labels", "python_tool_labels", "opaque_python_labels", "opaque_mcp_labels"):
        setattr(capability_grants, name, lambda *args, **kwargs: NONE)
    try:
        yield
    finally:
        (capabilities.check_flows, capability_grants.capability_labels, capability_grants.python_tool_labels,
         capability_grants.opaque_python_labels, capability_grants.opaque_mcp_labels) = saved


@contextlib.contextmanager
def timing_flows(spent: list[float]) -> Iterator[None]:
    """Adds the time of the rule R003-R006 (the analysis, without the grant labels) to `spent`."""
    from llm_do.compiler.stages.check import capabilities

    real = capabilities.check_flows

    def timed(*args):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return real(*args)
        finally:
            spent.append(time.perf_counter() - start)

    capabilities.check_flows = timed  # type: ignore[assignment]
    try:
        yield
    finally:
        capabilities.check_flows = real  # type: ignore[assignment]


def build_once(root: Path) -> tuple[float, list[str]]:
    from llm_do.compiler.pipeline import compile_project

    gc.collect()
    start = time.perf_counter()
    result = compile_project(root)
    elapsed = time.perf_counter() - start
    assert result.bundle is not None, [d.message for d in result.diagnostics if d.is_error][:3]
    return elapsed, sorted({d.code for d in result.diagnostics})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--sizes", default="3000", help="worker counts (default 3000)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where projects are generated")
    args = parser.parse_args(argv)
    rows, ok = [], True
    for n in sorted({int(s) for s in args.sizes.split(",")}):
        root = flow_project(args.out / f"flows-{n}", n)
        _, codes = build_once(root)  # warm the introspection cache
        assert "R005" in codes, f"the generated project should hold gated flows, got {codes}"
        with_flows: list[float] = []
        baseline: list[float] = []
        analysis: list[float] = []
        for i in range(args.runs):
            order = [False, True] if i % 2 else [True, False]
            for flows in order:
                if flows:
                    with timing_flows(analysis):
                        with_flows.append(build_once(root)[0])
                else:
                    with without_flows():
                        baseline.append(build_once(root)[0])
        a, b = statistics.median(with_flows), statistics.median(baseline)
        gain = a / b - 1
        ok &= gain < TARGET
        share = statistics.median(analysis) / a
        rows.append([str(n), f"{b * 1000:.0f} ms", f"{a * 1000:.0f} ms", f"{gain:+.1%}",
                     f"{statistics.median(analysis) * 1000:.0f} ms ({share:.1%})", verdict(gain < TARGET)])
    print(machine())
    print(versions())
    print(table(["workers", "build without flows", "build with flows", "gain", "R003-R006 analysis", f"< {TARGET:.0%}"], rows))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
