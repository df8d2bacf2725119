"""Information-flow labels at build time: what each capability carries (`labels`: private,
untrusted, egress), where a Python tool's labels come from (`grant_labels`), how rule conditions
confine them (`rule_confinement`), and which callees declassify (`declassifying`).

Below the analysis that searches call paths for the lethal trifecta (`analysis.trifecta`), which
imports these; nothing here imports an analysis back.
"""
