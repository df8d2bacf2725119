"""How the CLI shows a run as it goes: the `-v` trace, the live progress display, the batch bar."""
