from llm_do.runtime import AgentArgs, PromptContent


class Topic(AgentArgs):
    topic: str

    def prompt_messages(self) -> list[PromptContent]:
        return [f"Topic: {self.topic}"]
