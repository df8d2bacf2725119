def notify(text: str) -> str:
    """Notify the team."""
    return "sent"


TOOLS = [notify]
CAPABILITIES = {"notify": []}
