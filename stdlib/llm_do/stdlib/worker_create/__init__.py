"""`worker_create`: workers that propose workers, and call the ones they created."""
