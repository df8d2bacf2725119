"""The check stage's rules: each a pure function from the resolved project to diagnostics.

One module per concern; `ALL_RULES` is the order they run in.
"""

from __future__ import annotations

from .capabilities import check_capabilities
from .entry_args import check_entry_args
from .graph_cycles import check_cycles
from .graph_depth import check_depth
from .graph_reachability import check_reachability
from .models import check_models
from .python_imports import check_python_imports

ALL_RULES = (
    check_python_imports,
    check_entry_args,
    check_models,
    check_cycles,
    check_depth,
    check_reachability,
    check_capabilities,
)
