"""Input and output schemas of the ticket classifier.

`Ticket` is what the triage worker passes when it calls the classifier: the model sees these
fields as the parameters of the `ticket_classifier` tool, and `prompt_messages` turns them into
the classifier's prompt. `TicketAssessment` is the classifier's structured output.
"""

from typing import Literal

from pydantic import BaseModel, Field

from llm_do.runtime import WorkerArgs


class Ticket(WorkerArgs):
    """One support ticket, as the triage worker read it from the customer's email."""

    subject: str = Field(description="The subject line of the customer's email.")
    body: str = Field(description="The customer's message, without signature or quoted replies.")
    customer_plan: Literal["free", "team", "enterprise"] = Field(
        default="free", description="The customer's plan; enterprise tickets have a 4-hour response target."
    )

    def prompt_messages(self) -> list[str]:
        return [f"Plan: {self.customer_plan}\nSubject: {self.subject}\n\n{self.body}"]


class TicketAssessment(BaseModel):
    """How the classifier judged a ticket."""

    category: Literal["billing", "bug", "how_to", "account_access", "feature_request"]
    urgency: Literal["low", "normal", "high", "critical"]
    summary: str = Field(description="One sentence a support engineer can act on.")
    needs_human: bool = Field(description="True when a person must act (refunds, data loss, security).")
    reply_points: list[str] = Field(description="What the reply to the customer must cover, in order.")
