def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


TOOLS = {"word_count": word_count}
