"""Ticket tools."""


def label(title: str) -> str:
    """Label a ticket by its title."""
    return "bug" if "error" in title.lower() else "question"


TOOLS = [label]
