"""Facts about the project's Python, learned without importing it into the compiler process."""
