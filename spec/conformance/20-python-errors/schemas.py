from pydantic import BaseModel

from llm_do.runtime import WorkerArgs


class Request(WorkerArgs):
    text: str

    def prompt_messages(self):
        return [self.text]


class NoPrompt(WorkerArgs):
    text: str


class Plain(BaseModel):
    text: str


class NotAModel:
    pass
