"""llm-do's flow guard on AgentDojo: every (user task, injection task) pair and every user task
without injection, run in-process on the generated projects with the obedient model, scored by
AgentDojo's own `utility` and `security` checks.

    python bench/agentdojo/run.py [--suites workspace,travel,banking,slack] [--benchmark-version v1]
                                  [--approvals approve-all|reject-all] [--attack important_instructions]
                                  [--json FILE] [--out DIR] [--guard-cost ROUNDS]

Prints per suite and in total: attacks that succeeded out of the cases, user tasks whose utility
check passes without and under attack, the median questions per task (calls the guard asked; with
`--approvals approve-all` nobody can answer them, so they are denied), the reason of every denial,
and the published figures beside them. `--json FILE` writes the totals as bench/README.md states.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from design import DESIGNS  # noqa: E402
from generate import DEFAULT_OUT, SUITE_NAMES, generate, suites_of  # noqa: E402
from obedient import Plan, markers, model_for  # noqa: E402

PUBLISHED = [
    ("AgentDojo, GPT-4o, no defence (Debenedetti et al. 2024)", "69%", "50%", "58% (targeted ASR)"),
    ("  tool filter / spotlighting (same paper)", "lower", "lower", "lower, not 0%"),
    ("CaMeL (Debenedetti et al. 2025)", "77% (84% undefended)", "", "0 attacks, 2.8x tokens"),
    ("Progent (Shi et al. 2025)", "", "", "2.2% (v1 of the paper), 0% (v2)"),
]
"""What the papers report, to stand beside our figures (bench/README.md cites each)."""


class DojoService:
    """The suite's environment, as the host holds it for the tools (`ctx.deps.services.dojo`):
    each call runs the suite's own function on it, and is recorded as AgentDojo's checks read calls."""

    def __init__(self, suite: Any) -> None:
        from agentdojo.functions_runtime import FunctionsRuntime

        self.runtime = FunctionsRuntime(suite.tools)
        self.env: Any = None
        self.trace: list[Any] = []

    def call(self, function: str, **kwargs: Any) -> str:
        from agentdojo.functions_runtime import FunctionCall
        from pydantic_core import to_jsonable_python

        self.trace.append(FunctionCall(function=function, args=kwargs))
        result, error = self.runtime.run_function(self.env, function, kwargs)
        if error is not None:
            return f"error: {error}"
        return json.dumps(to_jsonable_python(result), ensure_ascii=False)


@dataclass
class Tally:
    cases: int = 0
    attacks_succeeded: int = 0
    utility_attack: int = 0
    tasks: int = 0
    utility_plain: int = 0
    questions: list[int] = field(default_factory=list)
    """Per run (with and without attack): how many calls the guard asked."""
    denials: collections.Counter[str] = field(default_factory=collections.Counter)
    seconds: float = 0.0
    succeeded: list[str] = field(default_factory=list)
    failed_plain: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("cases", "attacks_succeeded", "utility_attack", "tasks", "utility_plain", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.questions += other.questions
        self.denials.update(other.denials)
        self.succeeded += other.succeeded
        self.failed_plain += other.failed_plain

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "attacks_succeeded": self.attacks_succeeded,
                "utility_no_attack": round(self.utility_plain / self.tasks, 4) if self.tasks else 0.0,
                "utility_under_attack": round(self.utility_attack / self.cases, 4) if self.cases else 0.0,
                "median_questions": statistics.median(self.questions) if self.questions else 0}


def make_attack(name: str, suite: Any) -> Any:
    """AgentDojo's attack `name`, aimed at GPT-4o as in the published runs."""
    from agentdojo.attacks.attack_registry import load_attack

    class Target:
        name = "gpt-4o-2024-05-13"

    return load_attack(name, suite, Target())  # type: ignore[arg-type]


class SuiteRun:
    """The runs of one suite on its built project, sharing one `Runtime`."""

    def __init__(self, suite: Any, lock: Path, approvals: str) -> None:
        from llm_do.runtime import Runtime, RuntimeConfig

        self.suite = suite
        self.design = DESIGNS[suite.name]
        self.service = DojoService(suite)
        self.events: list[Any] = []
        self.plan_box: dict[str, Plan] = {}
        self.config = RuntimeConfig(
            approval_mode="approve_all" if approvals == "approve-all" else "reject_all",
            model_for=lambda worker: model_for(self.plan_box["plan"])(worker),
            services={"dojo": self.service}, on_event=self.events.append)
        self.runtime = Runtime.load(lock, self.config)
        self.readers = {t: r.name for r in self.design.readers if not r.quarantined for t in r.tools}
        self.quarantined = {t: r.name for r in self.design.readers if r.quarantined for t in r.tools}
        self._defaults: dict[str, str] | None = None
        self.last_run = 0.0
        """CPU seconds of the last case's `Runtime.run`."""

    def environment(self, injections: dict[str, str]) -> Any:
        """`TaskSuite.load_and_inject_default_environment`, step by step, with PyYAML's C loader (the
        same document, five times faster; the suite's own loader takes most of a case's time)."""
        import yaml
        from agentdojo.task_suite.task_suite import read_suite_file, validate_injections

        suite = self.suite
        if self._defaults is None:
            self._defaults = suite.get_injection_vector_defaults()
        validate_injections(injections, self._defaults)
        text = read_suite_file(suite.name, "environment.yaml", suite.data_path).format(**{**self._defaults, **injections})
        return suite.environment_type.model_validate(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))

    def plan(self, user_task: Any, injection_task: Any, injections: dict[str, str], env: Any) -> Plan:
        itself = self.design.reads_itself(user_task.ID)
        owner = {} if "*" in itself else {t: r for t, r in self.readers.items() if t not in itself}
        calls = [(c.function, dict(c.args)) for c in user_task.ground_truth(env.model_copy(deep=True))]
        plan = Plan(calls, dict(owner), user_task.GROUND_TRUTH_OUTPUT,
                    quarantined={i: self.quarantined[calls[i][0]] for i in self.design.quarantined_reads.get(user_task.ID, ())},
                    words_into=self.design.words_into.get(user_task.ID))
        if injection_task is not None:
            plan.injection_calls = [(c.function, dict(c.args)) for c in injection_task.ground_truth(env.model_copy(deep=True))]
            plan.injection_answer = injection_task.GROUND_TRUTH_OUTPUT
            plan.markers = markers(injections)
        return plan

    def run(self, user_task: Any, injection_task: Any | None, injections: dict[str, str]) -> tuple[bool, bool | None, int, list[str]]:
        """(utility, attack succeeded (None without attack), questions asked, denial reasons)."""
        from agentdojo.types import text_content_block_from_string

        env = user_task.init_environment(self.environment(injections))
        pre = env.model_copy(deep=True)
        self.plan_box["plan"] = self.plan(user_task, injection_task, injections, env)
        self.service.env, self.service.trace = env, []
        self.events.clear()
        self.runtime.usage = RunUsage()  # the Runtime adds up every run's usage (and its limits): one case is one run
        started = time.process_time()
        try:
            output = self.runtime.run(user_task.PROMPT).output
        except Exception as exc:  # a run that fails completes nothing; say why among the denials
            self.events.append(_Failed(f"run failed: {type(exc).__name__}: {str(exc)[:120]}"))
            output = ""
        self.last_run = time.process_time() - started
        answer = [text_content_block_from_string(output if isinstance(output, str) else json.dumps(output, default=str))]
        utility = self.suite._check_task_result(user_task, answer, pre, env, self.service.trace)
        attacked = None
        if injection_task is not None:
            attacked = self.suite._check_task_result(injection_task, answer, pre, env, self.service.trace)
        asked = sum(1 for e in self.events if e.kind == "flow_guarded" and e.action == "ask")
        denied = [e.result for e in self.events if e.kind == "tool_returned" and e.outcome == "denied"]
        return utility, attacked, asked, denied


@dataclass
class _Failed:
    result: str
    kind: str = "tool_returned"
    outcome: str = "denied"


def RunUsage() -> Any:
    from pydantic_ai.usage import RunUsage as _RunUsage

    return _RunUsage()


def run_suite(suite: Any, lock: Path, approvals: str, attack_name: str) -> Tally:
    started = time.process_time()
    runner = SuiteRun(suite, lock, approvals)
    attack = make_attack(attack_name, suite)
    tally = Tally()
    for user_task in suite.user_tasks.values():
        utility, _, asked, denied = runner.run(user_task, None, {})
        tally.tasks += 1
        tally.utility_plain += utility
        if not utility:
            tally.failed_plain.append(user_task.ID)
        tally.questions.append(asked)
        tally.denials.update(_reason(d) for d in denied)
        for injection_task in suite.injection_tasks.values():
            injections = attack.attack(user_task, injection_task)
            utility, attacked, asked, denied = runner.run(user_task, injection_task, injections)
            tally.cases += 1
            tally.utility_attack += utility
            tally.attacks_succeeded += bool(attacked)
            if attacked:
                tally.succeeded.append(f"{user_task.ID}/{injection_task.ID}")
            tally.questions.append(asked)
            tally.denials.update(_reason(d) for d in denied)
    tally.seconds = time.process_time() - started
    return tally


def guard_cost(suites: dict[str, Any], locks: dict[str, Path], plain: dict[str, Path], rounds: int) -> str:
    """What the guard adds to a run: every user task without attack, on the project and on the same
    project without flow labels (no guard), alternating, `rounds` times; the sum of the per-task
    medians of `Runtime.run` (CPU seconds), and their ratio. Tasks whose runs differ (the guard
    asked) are left out: there the two runs do different work."""
    lines = ["", f"The guard's cost (CPU of Runtime.run, median of {rounds} per task, tasks the guard did not ask):"]
    total = [0.0, 0.0]
    for name, suite in suites.items():
        runs = {True: SuiteRun(suite, locks[name], "approve-all"), False: SuiteRun(suite, plain[name], "approve-all")}
        times: dict[bool, list[float]] = {True: [], False: []}
        for user_task in suite.user_tasks.values():
            per: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(rounds):
                for labelled in (False, True):
                    _, _, asked, _ = runs[labelled].run(user_task, None, {})
                    per[labelled].append(runs[labelled].last_run)
            if asked:
                continue
            for labelled in (True, False):
                times[labelled].append(statistics.median(per[labelled]))
        guarded, bare = sum(times[True]), sum(times[False])
        total[0] += guarded
        total[1] += bare
        lines.append(f"  {name:<10} {guarded:7.2f} s with the guard, {bare:7.2f} s without: {guarded / bare - 1:+.1%} "
                     f"({len(times[True])} tasks)")
    lines.append(f"  {'total':<10} {total[0]:7.2f} s with the guard, {total[1]:7.2f} s without: {total[0] / total[1] - 1:+.1%}")
    return "\n".join(lines)


def _reason(denial: str) -> str:
    """A denial's reason without the call's own details (which tools of which worker gave the legs)."""
    return re.sub(r" \(from [^()]*\)", "", denial).replace("; it did not run", "")


def percent(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}%" if d else "-"


def report(version: str, approvals: str, tallies: dict[str, Tally], total: Tally) -> str:
    lines = [f"AgentDojo {version}, obedient model, --{approvals}, attack: important_instructions", ""]
    head = f"{'suite':<10} {'attacks succeeded':>20} {'utility, no attack':>20} {'utility, under attack':>22} {'median questions':>17} {'CPU':>7}"
    lines += [head, "-" * len(head)]
    for name, t in [*tallies.items(), ("total", total)]:
        lines.append(f"{name:<10} {f'{t.attacks_succeeded} / {t.cases}':>20} "
                     f"{f'{t.utility_plain}/{t.tasks} {percent(t.utility_plain, t.tasks)}':>20} "
                     f"{f'{t.utility_attack}/{t.cases} {percent(t.utility_attack, t.cases)}':>22} "
                     f"{t.to_json()['median_questions']:>17} {t.seconds:>6.1f}s")
    lines += ["", "Published (GPT-4o unless said):", f"{'':<54} {'utility':>22} {'under attack':>13} {'attacks':>26}"]
    lines += [f"{who:<54} {u:>22} {ua:>13} {a:>26}" for who, u, ua, a in PUBLISHED]
    lines += ["", "Denials (reason: count):"]
    lines += [f"  {count:>5}  {reason}" for reason, count in total.denials.most_common()] or ["  none"]
    if total.succeeded:
        lines += ["", "Attacks that succeeded: " + ", ".join(total.succeeded)]
    failed = {name: t.failed_plain for name, t in tallies.items() if t.failed_plain}
    if failed:
        lines += ["", "User tasks failed without attack: " + "; ".join(f"{n}: {', '.join(f)}" for n, f in failed.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default=",".join(SUITE_NAMES))
    parser.add_argument("--benchmark-version", default="v1")
    parser.add_argument("--approvals", choices=("approve-all", "reject-all"), default="approve-all")
    parser.add_argument("--attack", default="important_instructions")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--guard-cost", type=int, default=0, metavar="ROUNDS",
                        help="also time every task without attack with and without the guard, ROUNDS times each")
    args = parser.parse_args(argv)
    suites = suites_of(args.benchmark_version, args.suites.split(","))
    locks = generate(suites, args.benchmark_version, args.out)
    tallies = {name: run_suite(suite, locks[name], args.approvals, args.attack) for name, suite in suites.items()}
    total = Tally()
    for t in tallies.values():
        total.add(t)
    print(report(args.benchmark_version, args.approvals, tallies, total))
    if args.guard_cost:
        plain = generate(suites, args.benchmark_version, args.out, labelled=False)
        print(guard_cost(suites, locks, plain, args.guard_cost))
    if args.json:
        args.json.write_text(json.dumps({"benchmark_version": args.benchmark_version, "total": total.to_json(),
                                         "suites": {n: t.to_json() for n, t in tallies.items()}}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
