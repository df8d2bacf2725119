"""What a project can do, read from its bundle or resolved project without running it: the
capabilities each worker reaches and how they are gated (`capabilities`), the grants the bundle
records (`capability_grants`), the call graph, the lethal trifecta over call paths (`trifecta`)
and the information-flow labels it searches for (`flows`, below the rest).

Below the stages that check and lower a project, and the diff and reports that say its results.
"""
