import os

LIMIT = int(os.environ.get("LLM_DO_CONFORMANCE_LIMIT", "not a number"))
