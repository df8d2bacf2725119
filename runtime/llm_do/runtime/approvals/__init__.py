"""Approvals at run time: the decisions a host gives and the approvers (`decisions`), the one
description of a call waiting for an answer (`question`), the terminal's prompt (`terminal`), and
the approval an opaque Python toolset gives its own tools (`opaque_toolsets`). The gate that asks
them is `toolsets/gate.py`; the rules it evaluates are `llm_do.bundle.approval`."""
