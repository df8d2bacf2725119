"""Evaluators of live runs (`llm-do test --live`), shaped like pydantic_evals' (an `evaluate(ctx)`
returning a value and a reason), so a project can move to pydantic_evals once a release of it works
with the pydantic-ai llm-do needs (its releases pin an older one). An LLM judge grades an output
against a rubric with a pydantic-ai Agent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from pydantic_ai.models import Model


@dataclass(frozen=True)
class EvaluatorContext:
    """What an evaluator sees of one run (pydantic_evals' `EvaluatorContext`, trimmed)."""

    name: str
    inputs: object
    output: object


@dataclass(frozen=True)
class EvaluationReason:
    """An evaluator's verdict: a pass, why, and for a judge a score."""

    value: bool
    reason: str | None = None
    score: float | None = None
    """A judge's score from 0 to 1, besides its pass."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Contains(_Spec):
    """The output (as text, or its JSON) contains this text."""

    contains: str

    def evaluate(self, ctx: EvaluatorContext) -> EvaluationReason:
        found = self.contains in _text(ctx.output)
        return EvaluationReason(found, None if found else f"does not contain {self.contains!r}")


class Equals(_Spec):
    """The output is exactly this value."""

    equals: object

    def evaluate(self, ctx: EvaluatorContext) -> EvaluationReason:
        same = ctx.output == self.equals
        return EvaluationReason(same, None if same else f"got {_text(ctx.output)[:200]!r}")


class JudgeSpec(_Spec):
    rubric: str
    """What a good output does, in words the judge model grades against."""
    model: str | None = None
    """The judge's model (default: LLM_DO_MODEL, else the run's project default)."""
    include_input: bool = True


class Judge(_Spec):
    """An LLM judge (pydantic_evals' `LLMJudge`): a pass and a score with a reason."""

    judge: JudgeSpec

    def evaluate(self, ctx: EvaluatorContext, model: Model | str) -> EvaluationReason:
        grading = judge_output(self.judge, ctx, model)
        return EvaluationReason(grading.passed, grading.reason, min(max(grading.score, 0.0), 1.0))

    def label(self) -> str:
        return f"judge: {self.judge.rubric[:60]}"


EvaluatorSpec = Contains | Equals | Judge


class Grading(BaseModel):
    """What the judge model answers."""

    reason: str = Field(description="Why the output passes or fails the rubric, in one or two sentences.")
    passed: bool = Field(description="Whether the output meets the rubric.")
    score: float = Field(description="How well it meets the rubric, from 0 to 1.")


JUDGE_INSTRUCTIONS = ("You grade the output of an AI worker against a rubric. Read the input it was given (when shown), "
                      "its output and the rubric, and answer whether the output meets the rubric, with a score from 0 to 1 "
                      "and a short reason.")


def judge_output(spec: JudgeSpec, ctx: EvaluatorContext, model: Model | str) -> Grading:
    from pydantic_ai import Agent

    parts = []
    if spec.include_input:
        parts.append(f"<Input>\n{_text(ctx.inputs)}\n</Input>")
    parts += [f"<Output>\n{_text(ctx.output)}\n</Output>", f"<Rubric>\n{spec.rubric}\n</Rubric>"]
    agent = Agent(model, output_type=Grading, instructions=JUDGE_INSTRUCTIONS)
    return agent.run_sync("\n".join(parts)).output


def label(spec: EvaluatorSpec) -> str:
    if isinstance(spec, Contains):
        return f"contains {spec.contains!r}"
    if isinstance(spec, Equals):
        return "equals"
    return spec.label()


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def runs_needed(pass_rate: float, runs: int) -> int:
    """How many of `runs` must pass for a share of at least `pass_rate` (0.7 of 10 is 7, not 8)."""
    import math

    return math.ceil(round(pass_rate * runs, 9))
