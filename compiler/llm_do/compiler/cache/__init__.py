"""What a build keeps between builds of the same project so that an edit costs only what it
changed, and the pipeline may read back: the packs in the user's cache (`packs`), the canonical
text of the lock's nodes (`splice`) and the front matter already parsed (`front_matter_cache`).

Below the stages: it stores, it decides nothing about a build (that is `build/`, above the pipeline).
"""
