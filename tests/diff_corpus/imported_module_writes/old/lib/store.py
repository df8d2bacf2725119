"""Where notes go."""


def keep(title: str, text: str) -> str:
    return f"{title}: {text}"
