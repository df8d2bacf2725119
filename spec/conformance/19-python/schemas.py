from pydantic import BaseModel

from llm_do.runtime import Attachment, WorkerArgs


class Request(WorkerArgs):
    text: str
    files: list[str] = []

    def prompt_messages(self) -> list[str | Attachment]:
        return [self.text, *(Attachment(f) for f in self.files)]


class Report(BaseModel):
    words: int
    summary: str
