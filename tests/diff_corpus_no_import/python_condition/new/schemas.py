from llm_do.runtime import WorkerArgs


class Req(WorkerArgs):
    version: str

    def prompt_messages(self) -> list[str]:
        return [self.version]
