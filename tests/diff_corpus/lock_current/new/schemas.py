"""The triage input."""

from llm_do.runtime import WorkerArgs


class Ticket(WorkerArgs):
    title: str
    body: str = ""

    def prompt_messages(self) -> list[str]:
        return [f"{self.title}\n\n{self.body}"]
