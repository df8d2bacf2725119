"""Schemas."""

from typing import Literal

from pydantic import BaseModel

from llm_do.runtime import WorkerArgs


class Request(WorkerArgs):
    topic: str
    audience: Literal["users", "developers"] = "users"
    deadline: str | None = None

    def prompt_messages(self):
        return [f"Write about {self.topic} for {self.audience}."]


class Report(BaseModel):
    title: str | None = None
    kind: Literal["note", "fix"]
