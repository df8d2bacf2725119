"""The llm-do version: recorded in every bundle, so a lock built by another compiler is stale."""

VERSION = "0.1.0"
