"""Mutation testing of the security modules: would the tests notice a small change to the code?

Each mutant is one small change to one module (a comparison flipped, `and` made `or`, an element
dropped from a literal set/tuple/list/dict or from a call's constant arguments, a condition
negated, a constant replaced, a statement deleted). The module's test files run against it; a
mutant that no test fails on *survives* and is printed with its line. The score is killed / all.

Not a test and not run in CI. From the repository root, with the project's environment active:

    python bench/mutation.py                                   # every module in DEFAULT_TARGETS
    python bench/mutation.py --module runtime/llm_do/bundle/approval.py \\
        --tests tests/runtime/test_approvals.py               # any module, its tests
    python bench/mutation.py --only commands --scope code     # the code, not the flag tables
    python bench/mutation.py --only commands --scope tables --max 100

Mutants run in a copy of the source tree (the working tree is never touched), each in a process
forked from one that has already imported pytest, pydantic and pydantic-ai but no llm-do module, so
a mutant costs the tests' own time. A mutant whose tests hang (one test past `--per-test`, or all
past `--timeout`) counts as killed. POSIX only.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCE_ROOTS = ("compiler", "runtime", "stdlib")

DEFAULT_TARGETS: dict[str, tuple[str, ...]] = {
    "runtime/llm_do/toolkit/files.py": (
        "tests/stdlib/test_paths.py", "tests/stdlib/test_shell_commands.py", "tests/stdlib/test_filesystem_toolset.py",
    ),
    "stdlib/llm_do/stdlib/shell/commands.py": (
        "tests/stdlib/test_shell_commands.py", "tests/stdlib/test_shell_confinement.py",
        "tests/stdlib/test_shell_toolset.py", "tests/stdlib/test_spec_stdlib.py",
        # It times how fast a cancelled command is killed (the runner, not the policy): flaky under load.
        "--deselect=tests/stdlib/test_shell_toolset.py::test_run_argv_cancelled_kills",
    ),
    "runtime/llm_do/runtime/approvals/decisions.py": (
        "tests/runtime/test_approval_pins.py", "tests/runtime/test_approvals.py", "tests/runtime/test_gate_requests.py",
    ),
    "runtime/llm_do/runtime/toolsets/gate.py": (
        "tests/runtime/test_gate_requests.py", "tests/runtime/test_approval_pins.py", "tests/runtime/test_approvals.py",
        "tests/runtime/test_rules_race.py", "tests/runtime/test_attachment_reads.py", "tests/runtime/test_events.py",
        "tests/runtime/test_scripts.py",
        # The taint guard's runs: the gate asks (or refuses) an egress from a frame holding both legs.
        "tests/runtime/test_taint.py",
    ),
    "runtime/llm_do/bundle/approval.py": ("tests/runtime/test_approval_policy.py",),
    "runtime/llm_do/runtime/taint.py": (
        "tests/runtime/test_taint.py", "tests/runtime/test_taint_runs.py",
    ),
    "runtime/llm_do/runtime/verified_imports.py": (
        "tests/runtime/test_verified_imports_hook.py", "tests/runtime/test_verified_imports.py",
        # `PYTHONPATH=src`: a verified module reached through another sys.path entry (`_served_elsewhere`).
        "tests/runtime/test_verified_imports_src_layout.py",
    ),
    "runtime/llm_do/runtime/recording/redaction.py": (
        "tests/recording/test_redaction.py", "tests/recording/test_cassette_secrets.py",
    ),
    "runtime/llm_do/runtime/recording/secret_forms.py": (
        "tests/recording/test_redaction.py", "tests/recording/test_cassette_secrets.py",
    ),
    "runtime/llm_do/runtime/recording/paged_reads.py": ("tests/recording/test_cassette_secrets.py",),
    "runtime/llm_do/runtime/recording/sensitive_reads.py": (
        "tests/recording/test_sensitive_reads.py", "tests/recording/test_cassette_secrets.py",
    ),
    # This round's security code (issue 36): protected paths, lock verification and signing, signed
    # threads, declassification.
    "runtime/llm_do/toolkit/protected.py": ("tests/stdlib/test_protected_paths.py",),
    "runtime/llm_do/provenance/lock_sources.py": ("tests/runtime/test_lock_sources.py",),
    "runtime/llm_do/provenance/signing.py": ("tests/provenance/test_signing.py",),
    "runtime/llm_do/runtime/conversation_store.py": ("tests/runtime/test_private_state.py", "tests/runtime/test_chat.py"),
    "runtime/llm_do/bundle/declassify.py": ("tests/bundle/test_declassify.py", "tests/runtime/test_flow_precision.py"),
    # The rest issue 36 names: the tools' file I/O, the build records with the user cache, the budget.
    "runtime/llm_do/toolkit/resolved_io.py": ("tests/stdlib/test_resolved_io.py", "tests/stdlib/test_protected_paths.py"),
    "runtime/llm_do/provenance/build_record.py": (
        "tests/compiler/test_build_record.py", "tests/compiler/test_build_record_edits.py",
        "tests/provenance/test_record_soundness.py",
    ),
    "runtime/llm_do/provenance/user_cache.py": ("tests/provenance/test_user_cache.py",
                                                "tests/provenance/test_record_soundness.py",
                                                "tests/compiler/test_build_record.py"),
    "compiler/llm_do/compiler/build/lint_record.py": ("tests/compiler/test_lint_record.py",),
    "runtime/llm_do/runtime/budget.py": (
        "tests/runtime/test_local_budget.py", "tests/runtime/test_budget.py",
    ),
    "runtime/llm_do/runtime/durable/budget_ledger.py": (
        "tests/runtime/test_shared_budget.py", "tests/runtime/test_budget_ledger.py", "tests/runtime/test_durable_budget.py",
        # It starts a Postgres cluster for every mutant; the same rules run on SQLite in the files above.
        "--deselect=tests/runtime/test_budget_ledger.py::test_processes_on_one_postgres_server_share_one_budget",
    ),
}
"""Each module and the test files that should catch a change to it (any pytest arguments)."""

PRELOAD = ("pytest", "pydantic", "pydantic_ai", "pydantic_ai.models.function", "click", "click.testing",
           "yaml", "jinja2", "lark", "networkx", "rich.console")
"""Imported once before forking, so no mutant pays for them (no llm_do module: those must load mutated)."""

COMPARE_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}


@dataclass(frozen=True)
class Mutant:
    line: int
    what: str
    source: str


# --- making mutants ----------------------------------------------------------------------------


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """Nodes no mutant touches: docstrings, annotations, `if TYPE_CHECKING:` blocks, imports."""
    skip: set[int] = set()

    def skip_all(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                skip_all(body[0])
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            skip_all(node)  # attribute docstrings
        if isinstance(node, (ast.AnnAssign, ast.arg)):
            skip_all(node.annotation)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip_all(node.returns)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skip_all(node)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skip_all(node)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip_all(node)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("Literal", "Final", "Callable"):
            skip_all(node)  # type aliases: no behaviour to change
    return skip


def _in_functions(tree: ast.Module) -> set[int]:
    """The nodes inside a function or method: code, as against the module's tables."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node))
    return inside


def _sites(tree: ast.Module, scope: str = "all") -> Iterator[tuple[int, str, str]]:
    """(index of the node in ast.walk order, operator, detail) for every change this module allows;
    `scope` `code` keeps those inside functions, `tables` those outside (module-level data)."""
    skip = _skipped_nodes(tree)
    code = _in_functions(tree)
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip or (scope == "code" and id(node) not in code) or (scope == "tables" and id(node) in code):
            continue
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in COMPARE_FLIPS:
                    yield index, "compare", str(k)
        elif isinstance(node, ast.BoolOp):
            yield index, "boolop", ""
        elif isinstance(node, (ast.Set, ast.List, ast.Tuple)) and isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            for k in range(len(node.elts)):
                yield index, "drop-element", str(k)
        elif isinstance(node, ast.Dict):
            for k in range(len(node.keys)):
                yield index, "drop-element", str(k)
        elif isinstance(node, ast.Call):
            for k, arg in enumerate(node.args):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and len(node.args) > 1:
                    yield index, "drop-argument", str(k)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield index, "drop-not", ""
        elif isinstance(node, ast.Constant) and not isinstance(node.value, bytes) and node.value is not Ellipsis:
            yield index, "constant", ""
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            yield index, "negate", ""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.AsyncFor, ast.While,
                             ast.With, ast.AsyncWith, ast.Try)):
            for k, stmt in enumerate(node.body):
                if id(stmt) not in skip and not isinstance(stmt, (ast.Pass, ast.FunctionDef, ast.ClassDef)):
                    yield index, "delete", str(k)


def _other_constant(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    if isinstance(value, str):
        return "" if value else "mutated"
    return 0  # None


def _apply(node: ast.AST, operator: str, detail: str) -> tuple[int, str]:
    """Change `node` in place; return the line and a description of the change."""
    line = getattr(node, "lineno", 0)
    if operator == "compare":
        assert isinstance(node, ast.Compare)
        k = int(detail)
        old = node.ops[k]
        node.ops[k] = COMPARE_FLIPS[type(old)]()
        return line, f"{type(old).__name__} -> {type(node.ops[k]).__name__}"
    if operator == "boolop":
        assert isinstance(node, ast.BoolOp)
        old_name = type(node.op).__name__
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return line, f"{old_name.lower()} -> {type(node.op).__name__.lower()}"
    if operator == "drop-element":
        k = int(detail)
        if isinstance(node, ast.Dict):
            key = node.keys[k]
            shown = ast.unparse(key) if key is not None else "**" + ast.unparse(node.values[k])
            line = getattr(key, "lineno", line)
            del node.keys[k], node.values[k]
        else:
            assert isinstance(node, (ast.Set, ast.List, ast.Tuple))
            element = node.elts[k]
            shown, line = ast.unparse(element), getattr(element, "lineno", line)
            del node.elts[k]
            if isinstance(node, ast.Set) and not node.elts:
                return line, f"drop {shown} (empty set)"
        return line, f"drop {shown[:60]}"
    if operator == "drop-argument":
        assert isinstance(node, ast.Call)
        k = int(detail)
        shown, line = ast.unparse(node.args[k]), node.args[k].lineno
        del node.args[k]
        return line, f"drop argument {shown[:60]}"
    if operator == "drop-not":
        return line, "drop `not`"
    if operator == "constant":
        assert isinstance(node, ast.Constant)
        old_value = node.value
        node.value = _other_constant(old_value)
        return line, f"{old_value!r:.40} -> {node.value!r}"
    if operator == "negate":
        assert isinstance(node, (ast.If, ast.While, ast.IfExp))
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
        return line, "negate the condition"
    if operator == "delete":
        body = node.body  # type: ignore[attr-defined]
        k = int(detail)
        stmt = body[k]
        body[k] = ast.Pass()
        first = ast.unparse(stmt).splitlines()[0]
        return stmt.lineno, f"delete `{first[:60]}`"
    raise ValueError(operator)


class _DropNot(ast.NodeTransformer):
    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:  # noqa: N802 - ast's visitor naming
        if node is self.target:
            return self.visit(node.operand)
        return self.generic_visit(node)


def mutants(source: str, scope: str = "all") -> Iterator[Mutant]:
    tree = ast.parse(source)
    for index, operator, detail in list(_sites(tree, scope)):
        mutated = copy.deepcopy(tree)
        node = next(n for i, n in enumerate(ast.walk(mutated)) if i == index)
        line, what = _apply(node, operator, detail)
        if operator == "drop-not":
            mutated = _DropNot(node).visit(mutated)
        ast.fix_missing_locations(mutated)
        yield Mutant(line, f"{operator}: {what}", ast.unparse(mutated))


# --- running them ------------------------------------------------------------------------------


def _copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in (*SOURCE_ROOTS, "tests", "spec", "examples"):
        shutil.copytree(REPO / name, dest / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)


class _TestAlarm:
    """A pytest plugin: a test running past `seconds` fails (a mutant's endless loop ends at once
    instead of at the mutant's whole timeout)."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds

    def _fire(self, signum: int, frame: object) -> None:
        raise TimeoutError(f"mutation: a test ran past {self.seconds} s")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: object) -> Iterator[None]:
        old = signal.signal(signal.SIGALRM, self._fire)
        signal.alarm(self.seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def _run_tests(work: Path, tests: tuple[str, ...], timeout: float, quiet: bool = True, per_test: int = 0) -> str:
    """'killed', 'survived' or 'timeout': the tests run in a forked child against the tree in `work`."""
    pid = os.fork()
    if pid == 0:  # the child: run pytest quietly, exit with its status
        code = 3
        try:
            os.chdir(work)
            if quiet:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
            plugins = [_TestAlarm(per_test)] if per_test else []
            # -n 0: in this forked process, which has pydantic-ai loaded (xdist's workers would load it again)
            code = int(pytest.main(["-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--no-header", *tests], plugins=plugins))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.02)


def _prepare(work: Path) -> None:
    """This process: import what every mutant shares, make the copy's llm_do the one imported."""
    sys.dont_write_bytecode = True
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.environ.pop("LLM_DO_MODEL", None)
    copy = [str(work), *(str(work / root) for root in SOURCE_ROOTS)]
    # In place of the script's folder (bench/): the path is then the one of a process started in the
    # copy, as the build records key a compile by it (`build_record.path_stamp`). Child processes the
    # tests start (`python -m llm_do...`) import the copy too, not the installed tree.
    sys.path[0:1] = copy
    os.environ["PYTHONPATH"] = os.pathsep.join(copy + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    if any(name == "llm_do" or name.startswith("llm_do.") for name in sys.modules):
        raise SystemExit("mutation: llm_do was imported before forking; a mutant would run the original")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", default=[], help="a module path (repeatable; default: DEFAULT_TARGETS)")
    parser.add_argument("--tests", action="append", default=[], help="test files for --module (repeatable)")
    parser.add_argument("--only", help="only the default modules whose path contains this")
    parser.add_argument("--operators", help="comma-separated: compare,boolop,drop-element,drop-argument,drop-not,"
                                            "constant,negate,delete (default: all)")
    parser.add_argument("--scope", choices=("all", "code", "tables"), default="all",
                        help="mutate code (inside functions), tables (module-level data) or both")
    parser.add_argument("--max", type=int, help="at most this many mutants per module (spread over the module)")
    parser.add_argument("--per-test", type=int, default=20, help="seconds one test may run under a mutant (0: no limit)")
    parser.add_argument("--save", type=Path, help="write the survivors to this JSON file")
    parser.add_argument("--retry", type=Path, help="run only the survivors a --save file lists (after adding tests)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 5 x the unmutated run + 5)")
    args = parser.parse_args(argv)

    if args.module:
        if not args.tests:
            parser.error("--module needs --tests")
        targets = {m: tuple(args.tests) for m in args.module}
    else:
        targets = {m: t for m, t in DEFAULT_TARGETS.items() if not args.only or args.only in m}
    wanted = set(args.operators.split(",")) if args.operators else None
    retry = {(s["module"], s["line"], s["what"]) for s in json.loads(args.retry.read_text())} if args.retry else None
    saved: list[dict[str, object]] = []

    with tempfile.TemporaryDirectory(prefix="llm-do-mutation-") as tmp:
        work = Path(tmp)
        _copy_tree(work)
        _prepare(work)
        totals: list[tuple[str, int, int, int]] = []
        for module, tests in targets.items():
            path = work / module
            original = path.read_text(encoding="utf-8")
            started = time.monotonic()
            if _run_tests(work, tests, 600, quiet=False) != "survived":
                print(f"{module}: the tests fail without any mutation (their output is above); fix them first",
                      file=sys.stderr)
                return 1
            timeout = args.timeout or 5 * (time.monotonic() - started) + 5
            todo = [m for m in mutants(original, args.scope) if wanted is None or m.what.split(":")[0] in wanted]
            if retry is not None:
                todo = [m for m in todo if (module, m.line, m.what) in retry]
            if args.max and len(todo) > args.max:
                step = len(todo) / args.max
                todo = [todo[int(i * step)] for i in range(args.max)]
            print(f"{module}: {len(todo)} mutants against {', '.join(tests)} (timeout {timeout:.0f} s)", flush=True)
            started = time.monotonic()
            survivors: list[Mutant] = []
            timeouts = 0
            try:
                for n, mutant in enumerate(todo, 1):
                    path.write_text(mutant.source, encoding="utf-8")
                    outcome = _run_tests(work, tests, timeout, per_test=args.per_test)
                    timeouts += outcome == "timeout"
                    if outcome == "survived":
                        survivors.append(mutant)
                        saved.append({"module": module, "line": mutant.line, "what": mutant.what})
                        print(f"  survived  {module}:{mutant.line}  {mutant.what}", flush=True)
                    if n % 20 == 0:
                        rate = (time.monotonic() - started) / n
                        print(f"  ... {n}/{len(todo)}, {rate:.1f} s a mutant", flush=True)
            finally:
                path.write_text(original, encoding="utf-8")
            killed = len(todo) - len(survivors)
            totals.append((module, killed, len(todo), timeouts))
        print("\nmodule                                       killed / mutants  score  (timeouts)")
        for module, killed, total, timeouts in totals:
            score = killed / total if total else 1.0
            print(f"{module:<44} {killed:>6} / {total:<7}  {score:6.1%}  ({timeouts})")
        if args.save:
            args.save.write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
