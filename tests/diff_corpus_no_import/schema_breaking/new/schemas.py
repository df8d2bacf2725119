from llm_do.runtime import WorkerArgs


class Req(WorkerArgs):
    version: int
    ticket: str

    def prompt_messages(self) -> list[str]:
        return [self.version]
