import urllib.request


def post(url: str, text: str) -> str:
    """Send text to a URL."""
    with urllib.request.urlopen(url, data=text.encode()) as response:
        return response.read().decode()


def upload(url: str, path: str) -> str:
    """Upload a file of the project to a URL."""
    with open(path, "rb") as file, urllib.request.urlopen(url, data=file.read()) as response:
        return response.read().decode()


TOOLS = [post, upload]
