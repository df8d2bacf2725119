from pydantic import BaseModel, Field


class Report(BaseModel):
    """A summary of the notes."""

    summary: str = Field(description="Two sentences at most.")
