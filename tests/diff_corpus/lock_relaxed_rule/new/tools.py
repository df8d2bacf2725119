"""Research tools."""


def count_words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


TOOLS = [count_words]
