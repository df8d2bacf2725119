"""Running one case: a scratch copy of the project (so a case never changes the project), the
bundle built in memory loaded from it, the model's turns from the case's cassette (replayed and
checked request by request), its script, or the project's models (`--live`), then the
expectations checked against what the run did."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .case_python import project_loader
from .cases import Case, CaseProblem, LoadedCase
from .evals import EvaluationReason, runs_needed
from .expectations import CallPattern, RunOutcome, check
from .staleness import stale_hint, static_changes

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from llm_do.bundle.approval import ApprovalMode
    from llm_do.runtime.approvals.decisions import ApprovalDecision, ApprovalRequest
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.recording.cassette import Cassette
    from llm_do.runtime.recording.recorder import Recorder
    from llm_do.runtime.recording.replay import Replayer

Status = Literal["passed", "failed", "stale"]
SKIPPED_IN_COPY = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".llm-do", "node_modules", ".mypy_cache")


@dataclass
class RunScore:
    """One live run of a case: what its expectations found, and each evaluator's verdict."""

    problems: list[str]
    evaluations: dict[str, EvaluationReason]

    @property
    def passed(self) -> bool:
        return not self.problems and all(e.value for e in self.evaluations.values())

    def shortcomings(self) -> list[str]:
        return [*self.problems, *(f"{label}: {e.reason or 'failed'}" for label, e in self.evaluations.items() if not e.value)]


def evaluate(case: Case, outcome: RunOutcome, judge_model: Callable[[str | None], Model | str]) -> dict[str, EvaluationReason]:
    """Each evaluator's verdict on a run's output (the last turn's)."""
    from .evals import EvaluatorContext, Judge, label

    ctx = EvaluatorContext(case.name, case.chat if case.chat is not None else case.input,
                           outcome.outputs[-1] if outcome.outputs else None)
    out = {}
    for spec in case.evaluators:
        out[label(spec)] = spec.evaluate(ctx, judge_model(spec.judge.model)) if isinstance(spec, Judge) else spec.evaluate(ctx)
    return out


@dataclass
class CaseResult:
    case: LoadedCase
    status: Status
    problems: list[str] = field(default_factory=list)
    recorded: Path | None = None
    """The cassette written (`--record`)."""
    runs: list[RunScore] = field(default_factory=list)
    """Live runs (`--live`), each with its evaluations."""
    hint: str | None = None
    """For a stale case: how to record its cassette again, as it was made."""

    @property
    def name(self) -> str:
        return self.case.case.name


@dataclass(frozen=True)
class CaseRunner:
    """Runs cases of one project built in memory (`bundle_bytes`) from `root`."""

    root: Path
    bundle_bytes: bytes
    live: bool = False
    record: bool = False
    warn: bool = True
    """Warn on stderr of the private paths a recorded run read (`llm-do init` records its own
    project's first case quietly; the cassette's `alerts` list them all the same)."""

    def run(self, loaded: LoadedCase) -> CaseResult:
        """Replay the case's cassette; with --live, run it on the project's models instead. With
        --record, a case whose cassette is stale or missing is recorded again: from the script it
        was recorded from (`Cassette.script`), else on the project's models (--live only); the
        cassette is replaced only by the recording of a run that passes the case."""
        check_patterns(loaded)
        case = loaded.case
        if case.cassette is None:
            if not self.live:
                with self._scratch() as copy:
                    return self._played(loaded, copy)[0]
            return self._live(loaded)
        path = loaded.beside(case.cassette)
        if self.live and not self.record:
            return self._live(loaded)
        recorded = None
        if path.is_file() or not self.record:
            recorded = self._cassette(loaded)
            with self._scratch() as copy:
                result = self._replayed(loaded, copy, recorded)
            if not self.record or result.status != "stale":
                return result
        if recorded is not None and recorded.script is not None:
            return self.record_from_script(loaded, recorded.script)
        if self.live:
            return self._live(loaded)
        if recorded is None:
            return CaseResult(loaded, "failed", [f"{case.cassette} is not there: record it on the project's models with "
                                                 "`llm-do test --record --live`, or from a script with "
                                                 "`llm-do run PROJECT --script SCRIPT --record DIR`"])
        return result

    def record_from_script(self, loaded: LoadedCase, script: str) -> CaseResult:
        """Record the case's cassette by playing `script` (relative to the project), offline; the
        cassette is written if the run passes the case (`record` must be on)."""
        with self._scratch() as copy:
            return self._played(loaded, copy, script=script)[0]

    @contextmanager
    def _scratch(self) -> Iterator[Path]:
        """A copy of the project the case may change: the project itself never is."""
        with tempfile.TemporaryDirectory(prefix="llm-do-test-") as scratch:
            copy = Path(scratch) / "project"
            shutil.copytree(self.root, copy, ignore=SKIPPED_IN_COPY, symlinks=True)
            yield copy

    def _live(self, loaded: LoadedCase) -> CaseResult:
        """The case on the project's models, `repeat` times (once when recording), each run judged by
        its expectations and the case's evaluators; it passes when at least `pass_rate` of them do."""
        case = loaded.case
        runs: list[RunScore] = []
        recorded = None
        for _ in range(1 if self.record else case.repeat):
            with self._scratch() as copy:
                result, score = self._played(loaded, copy)
            recorded = result.recorded
            runs.append(score)
        passing = sum(1 for run in runs if run.passed)
        needed = runs_needed(case.pass_rate, len(runs))
        status: Status = "passed" if passing >= needed else "failed"
        problems = [] if status == "passed" else [
            f"{passing} of {len(runs)} run{'s' if len(runs) != 1 else ''} passed; {needed} must "
            f"(pass_rate {case.pass_rate:g}: the share of runs that must pass)", *next(run.shortcomings() for run in runs if not run.passed)]
        return CaseResult(loaded, status, problems, recorded=recorded, runs=runs)

    def _judge_model(self, loaded: LoadedCase) -> Callable[[str | None], Model | str]:
        """The model of a judge: its own, else LLM_DO_MODEL, else the project's default."""
        import json
        import os

        def model(name: str | None) -> Model | str:
            from llm_do.runtime.models import ModelProblem, build_model

            chosen = name or os.environ.get("LLM_DO_MODEL") or (json.loads(self.bundle_bytes).get("defaults") or {}).get("model")
            if not chosen:
                raise CaseProblem(f"{loaded.shown}:{loaded.line}: case '{loaded.case.name}': a judge needs a model: give "
                                  "its `model`, LLM_DO_MODEL, or a project default")
            try:
                return build_model(chosen)
            except ModelProblem as exc:
                raise CaseProblem(f"{loaded.shown}:{loaded.line}: case '{loaded.case.name}': {exc}") from None

        return model

    def _bundle(self, copy: Path) -> LoadedBundle:
        from llm_do.runtime.bundle import bundle_from_bytes

        return bundle_from_bytes(self.bundle_bytes, copy / "bundle.lock")

    def _cassette(self, loaded: LoadedCase) -> Cassette:
        """The case's cassette, read and checked against the project (else `CassetteRefused`)."""
        from llm_do.runtime.recording.cassette import CassetteRefused, read_cassette

        from .case_paths import is_confined

        assert loaded.case.cassette is not None
        shown = _shown(loaded, loaded.case.cassette)
        cassette = read_cassette(loaded.beside(loaded.case.cassette), shown_as=shown)
        name = json.loads(self.bundle_bytes).get("name")
        if cassette.project != name:
            raise CassetteRefused(f"{shown}: recorded from project {cassette.project!r}, not this one ({name!r})")
        if cassette.script is not None and not is_confined(self.root, self.root, cassette.script):
            raise CassetteRefused(f"{shown}: script: {cassette.script!r} is not a file of the project")
        return cassette

    def _replayed(self, loaded: LoadedCase, copy: Path, cassette: Cassette) -> CaseResult:
        from llm_do.runtime.config import RuntimeConfig
        from llm_do.runtime.recording.replay import CassetteStale, Replayer, ReplayMismatch

        from ..recording import redactor_for

        case = loaded.case
        bundle = self._bundle(copy)
        replayer = Replayer(cassette, bundle, redactor_for(bundle))
        approvals = case.approvals or "recorded"
        mode: ApprovalMode = "prompt" if approvals == "recorded" else approvals
        record = RunOutcome()
        unanswered: list[str] = []
        config = RuntimeConfig(model_for=lambda worker: _placeholder(), wrap_model=replayer.wrap, cwd=copy,
                               remote_mcp=replayer.remote_mcp,
                               on_event=lambda e: record.events.append(e.to_dict()),
                               approval_mode=mode,
                               approval_callback=_recorded_answers(replayer, unanswered) if approvals == "recorded" else None)
        failure = _run(bundle, config, loaded, record)
        stale = _find(failure, CassetteStale)
        changed = [*static_changes(cassette, bundle), *replayer.stale, *(stale.changes if stale is not None else [])]
        if changed:
            return CaseResult(loaded, "stale", list(dict.fromkeys(changed)), hint=stale_hint(cassette))
        mismatch = _find(failure, ReplayMismatch)
        if mismatch is not None:
            return CaseResult(loaded, "failed", [str(mismatch)])
        problems = [f"approval of {tool} was asked, and the cassette recorded no answer" for tool in unanswered]
        if failure is None and (left := replayer.unused()):
            problems.append("the run did not make recorded requests: " + ", ".join(left))
        problems += check(case.expect, record, project_loader(copy, loaded))
        return CaseResult(loaded, "failed" if problems else "passed", problems)

    def _played(self, loaded: LoadedCase, copy: Path, script: str | None = None) -> tuple[CaseResult, RunScore]:
        """The case on its script (or `script`, the one its cassette was recorded from), or live on
        the project's models (then judged by its evaluators too); with --record, its cassette written
        when the run passes. Offline (without --live), a remote MCP server is not reached: the run
        fails naming it."""
        from llm_do.runtime.config import RuntimeConfig

        case = loaded.case
        bundle = self._bundle(copy)
        record = RunOutcome()
        mode: ApprovalMode = "approve_all" if case.approvals == "approve_all" else "reject_all"
        config = RuntimeConfig(cwd=copy, on_event=lambda e: record.events.append(e.to_dict()), approval_mode=mode,
                               remote_mcp=None if self.live else _not_reached)
        if script is None and case.script is not None:
            script = (loaded.beside(case.script).resolve()).relative_to(self.root.resolve()).as_posix()
        if script is not None:
            from llm_do.runtime.script import ScriptPlayer, ScriptProblem, check_script, load_script

            try:
                played = load_script(copy / script)
                check_script(played, bundle)
            except ScriptProblem as exc:
                raise CaseProblem(f"{loaded.shown}:{loaded.line}: case '{case.name}': {exc}") from None
            config = replace(config, model_for=ScriptPlayer(played).model_for)
        elif not self.live:
            raise CaseProblem(f"{loaded.shown}:{loaded.line}: case '{case.name}' has no cassette nor script: its model "
                              "turns come from the project's models, which only --live may call")
        recording = None
        if self.record and case.cassette is not None:
            from llm_do.runtime.recording.recorder import Recorder

            recording = Recorder(bundle, case.worker or str(bundle.entry.get("worker") or ""), script)
            config = recording.config(config)
        _run(bundle, config, loaded, record, recording)
        problems = check(case.expect, record, project_loader(copy, loaded))
        score = RunScore(problems, evaluate(case, record, self._judge_model(loaded)) if self.live and record.failure is None else {})
        written = None
        if recording is not None and score.passed:
            written = _save(recording, bundle, loaded.beside(case.cassette or ""), self.warn)
        elif recording is not None:
            problems.append(_kept(loaded))
        return CaseResult(loaded, "failed" if problems else "passed", problems, recorded=written), score


def _kept(loaded: LoadedCase) -> str:
    """Why a recording was not written: only a run that passes the case replaces a cassette."""
    assert loaded.case.cassette is not None
    there = loaded.beside(loaded.case.cassette).is_file()
    return (f"not recorded: the run did not pass the case, so {_shown(loaded, loaded.case.cassette)} "
            + ("is kept as it was" if there else "was not written"))


async def _not_reached(name: str, node: Any, start: Any) -> Any:
    """`RuntimeConfig.remote_mcp` for a run that plays a script offline: the server is not started."""
    from llm_do.runtime.errors import RunFailed

    raise RunFailed(f"remote MCP server '{name}' is not reached without --live, and a script holds no answer of "
                    "it: replay a cassette recorded from a run that used the server (`--record DIR`), or run "
                    "`llm-do test --live`")


def check_patterns(loaded: LoadedCase) -> None:
    """Every call pattern of the case parses, or the case file is a usage error at the case's line."""
    from llm_do.compiler.approvals.grammar import RuleSyntaxProblem

    calls = loaded.case.expect.calls
    for text in [*(calls.in_order if calls else []), *(calls.any_order if calls else []), *(calls.never if calls else [])]:
        try:
            CallPattern(text)
        except RuleSyntaxProblem as exc:
            raise CaseProblem(f"{loaded.shown}:{loaded.line}: case '{loaded.case.name}': calls: {text!r}: "
                              f"{str(exc).removeprefix('invalid approval rule ')}") from None


def _run(bundle: LoadedBundle, config: RuntimeConfig, loaded: LoadedCase, record: RunOutcome,
         recording: Recorder | None = None) -> BaseException | None:
    """Run the case's turns; the failure that ended the run, if one did (recorded in `record`)."""
    from llm_do.runtime.calls import usage_dict
    from llm_do.runtime.errors import failure_line
    from llm_do.runtime.events import jsonable
    from llm_do.runtime.runtime import Runtime

    case = loaded.case
    runtime = Runtime(bundle, config)
    turns: list[Any] = list(case.chat) if case.chat is not None else [case.input]
    failure = None
    try:
        if case.chat is not None:
            conversation = runtime.chat(worker=case.worker)
            for message in turns:
                if recording is not None:
                    recording.inputs.append({"input": message})
                output = conversation.send(message)
                record.outputs.append(jsonable(output))
        else:
            data = turns[0]
            if data is None:
                data = dict(bundle.entry.get("args") or {}) if case.worker is None else {}
            if recording is not None:
                recording.inputs.append(jsonable(data))
            output = runtime.run(data, worker=case.worker).output
            record.outputs.append(jsonable(output))
    except Exception as exc:
        from llm_do.runtime.bundle import BundleRefused
        from llm_do.runtime.errors import innermost

        if isinstance(innermost(exc), BundleRefused):
            raise
        failure = exc
        record.failure = failure_line(exc)
    record.usage = usage_dict(runtime.usage)
    if recording is not None:
        recording.outputs = list(record.outputs)
        recording.failure = record.failure
    return failure


E = TypeVar("E", bound=BaseException)


def _find(exc: BaseException | None, kind: type[E]) -> E | None:
    """The exception of class `kind` that ended the run, wherever the runtime wrapped it."""
    from llm_do.runtime.errors import innermost

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = innermost(exc)
        if isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _placeholder() -> Model:
    """What a replayed call's model is chosen as before the replay replaces it: no provider is built."""
    from pydantic_ai.models.test import TestModel

    return TestModel()


def _recorded_answers(replayer: Replayer, unanswered: list[str]) -> Callable[[ApprovalRequest], ApprovalDecision]:
    from llm_do.runtime.approvals.decisions import ApprovalDecision

    def answer(request: ApprovalRequest) -> ApprovalDecision:
        recorded = replayer.recorded_approval(request.tool)
        if recorded is None:
            unanswered.append(request.tool)
            return ApprovalDecision(False, note="the cassette recorded no answer to this approval")
        if recorded.feedback is not None:
            return ApprovalDecision.revise(recorded.feedback)
        return ApprovalDecision(recorded.approved, remember="session" if recorded.remember else "once", note=recorded.note)

    return answer


def _save(recorder: Recorder, bundle: LoadedBundle, path: Path, warn: bool) -> Path:
    from llm_do.runtime.recording.cassette import write_cassette

    from ..recording import redactor_for, warn_sensitive_reads

    write_cassette(path, recorder.cassette(redactor_for(bundle)))
    if warn:
        warn_sensitive_reads(path, recorder)
    return path


def _shown(loaded: LoadedCase, relative: str) -> str:
    return str(Path(loaded.shown).parent / relative)
