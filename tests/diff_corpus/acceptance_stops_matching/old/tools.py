import urllib.request


def post(url: str, text: str) -> str:
    """Send text to a URL."""
    with urllib.request.urlopen(url, data=text.encode()) as response:
        return response.read().decode()


TOOLS = [post]
