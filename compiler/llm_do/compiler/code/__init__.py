"""The code a project's Python tools and entry function run, read with `ast` (never imported):
fingerprints for the bundle (`fingerprint`) and the effects their calls can have (`effects`)."""
