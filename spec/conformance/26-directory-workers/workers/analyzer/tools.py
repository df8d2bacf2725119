def count_words(text: str) -> int:
    """Count words, as the analyzer does."""
    return len(text.split())


TOOLS = [count_words]
