def count_words(text: str) -> int:
    """Count words, as the formatter does."""
    return len(text.split())


TOOLS = [count_words]
