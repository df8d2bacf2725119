"""A helper module of formatter's tools.py, imported relatively: a source of the bundle too."""


def bullet(item: str) -> str:
    text = item.strip()
    return f"- {text[:1].upper()}{text[1:]}"
