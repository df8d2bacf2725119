"""The input side of a worker: `WorkerArgs` and the default `PromptInput`.

This module imports pydantic only, never pydantic-ai: user schema modules import it, and the
compiler imports those in its introspection subprocess, which must stay quick.
"""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from llm_do.toolkit.model_defaults import empty_list


class Attachment(BaseModel):
    """A file sent to the model with the prompt, as binary content.

    A relative `path` is resolved against the project root (the command line makes `--attach`
    paths absolute first); a model may only attach files inside the project. The worker's
    attachment policy (count, total size, suffixes) is checked before the model is called.
    """

    model_config = ConfigDict(frozen=True)

    path: str
    media_type: str | None = Field(default=None, description="Guessed from the suffix when not given.")

    def __init__(self, path: str | Path | None = None, /, **data: object) -> None:
        # `Attachment("a.pdf")` as in the `.agent` era, as well as `Attachment(path="a.pdf")`.
        if path is not None:
            data["path"] = str(path)
        super().__init__(**data)

    @property
    def suffix(self) -> str:
        return Path(self.path).suffix.lower()


PromptContent = str | Attachment
"""One part of a prompt: text or an attachment."""

EMPTY_INPUT = "(no input)"


def get_display_text(messages: list[PromptContent]) -> str:
    """The text parts of a prompt joined by spaces, for logs and displays (`(no input)` when
    there is no text); attachments are left out. A name of the `.agent` era, kept as it was."""
    text = " ".join(p for p in messages if isinstance(p, str))
    return text if text.strip() else EMPTY_INPUT


class WorkerArgs(BaseModel):
    """Base class of every worker input schema.

    Subclasses declare the fields a caller passes and implement `prompt_messages`, which turns
    them into the prompt: a list of text parts and attachments. Unknown fields are refused (a
    misspelt argument is an error, not silently dropped); a subclass may relax that.
    """

    model_config = ConfigDict(extra="forbid")

    @abstractmethod
    def prompt_messages(self) -> list[PromptContent]:
        """The prompt this input stands for."""


class PromptInput(WorkerArgs):
    """The input of a worker that declares no `schema_in_ref`: a text and optional attachments."""

    input: str = Field(description="The request for the worker.")
    attachments: list[str] = Field(default_factory=empty_list, description="Paths of files to attach.")

    def prompt_messages(self) -> list[PromptContent]:
        return [self.input, *(Attachment(path=p) for p in self.attachments)]


# Names of the `.agent` era of llm-do, kept so projects written then still import.
AgentArgs = WorkerArgs
