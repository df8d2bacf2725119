"""Chat tools."""


def post_message(channel: str, text: str) -> str:
    """Post a message to a channel."""
    return "ok"


TOOLS = [post_message]
