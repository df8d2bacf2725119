"""Filesystem toolsets: read, write and list files below one root."""
