"""The names a durable run records under, shared by the run (`dbos`) and its readers (`records`).
They derive from the bundle digest and worker, toolset and tool names, never from anything that
changes between a crash and its `resume`."""

from __future__ import annotations

WORKFLOW_PREFIX = "llm-do.run."
APPROVAL_PREFIX = "approval-"


def short_digest(digest: str) -> str:
    return digest.removeprefix("sha256:")[:16]


def workflow_name(digest: str) -> str:
    """The entry run's workflow."""
    return f"{WORKFLOW_PREFIX}{short_digest(digest)}"


def step_prefix(digest: str, worker: str) -> str:
    """A worker's steps: `<prefix>.<toolset>.<tool>`, `<prefix>.approval`, and pydantic-ai's
    model-request steps under the same name."""
    return f"llm-do.{short_digest(digest)}.{worker}"


def executor_id(run_id: str) -> str:
    """One DBOS executor per run: launching recovers the pending workflows of its own executor only."""
    return f"llm-do-{run_id}"
