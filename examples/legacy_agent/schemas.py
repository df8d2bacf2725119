"""Input schema of the planner, written against the `.agent`-era names.

`AgentArgs` and `PromptContent` are still exported by `llm_do.runtime` as aliases of
`WorkerArgs` and the prompt part type, so this file builds and runs unchanged; `llm-do migrate`
leaves Python files alone.
"""

from pydantic import Field

from llm_do.runtime import AgentArgs, PromptContent


class PlannerInput(AgentArgs):
    """One task to plan, and how much deeper the planner may split it."""

    task: str = Field(min_length=1, description="The goal to plan.")
    context: str = Field(default="", description="Constraints, resources or deadlines.")
    remaining_depth: int = Field(default=0, ge=0, description="How many more levels the plan may be split.")

    def prompt_messages(self) -> list[PromptContent]:
        return [f"Task: {self.task}\nContext: {self.context}\nRemaining depth: {self.remaining_depth}"]
