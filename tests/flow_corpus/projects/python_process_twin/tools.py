import subprocess


def sync(branch: str) -> str:
    """Push the branch."""
    return subprocess.run(["git", "push", "origin", branch], capture_output=True, text=True).stdout


TOOLS = [sync]
