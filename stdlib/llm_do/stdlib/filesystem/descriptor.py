"""The four filesystem toolsets: their settings, tools and default approvals."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..descriptor import ToolDescriptor, ToolsetDescriptor

DEFAULT_MAX_CHARS = 20_000


class FilesystemSettings(BaseModel):
    """Settings of a filesystem toolset, written `{filesystem_project: {path: docs, ...}}`."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="Sub-directory of the root the toolset is confined to.")
    max_read_bytes: int = Field(default=10_000_000, gt=0, description="Files larger than this are not read.")
    max_write_bytes: int = Field(default=1_000_000, gt=0, description="Content larger than this is not written.")
    allowed_suffixes: list[str] | None = Field(
        default=None, description="Only files with these suffixes (e.g. ['.md', '.txt']) are read, written or listed."
    )


class ReadFileArgs(BaseModel):
    path: str = Field(description="Path of the file, relative to the toolset's root.")
    offset: int = Field(default=0, ge=0, description="Character offset to start reading at.")
    max_chars: int = Field(default=DEFAULT_MAX_CHARS, gt=0, description="Most characters to return.")


class WriteFileArgs(BaseModel):
    path: str = Field(description="Path of the file, relative to the toolset's root.")
    content: str = Field(description="The whole new content of the file.")


class ListFilesArgs(BaseModel):
    path: str = Field(default=".", description="Directory to list, relative to the toolset's root.")
    pattern: str = Field(default="**/*", description="Glob pattern matched below that directory.")


READ_FILE = ToolDescriptor(
    name="read_file",
    description="Read a text file. Returns up to max_chars characters from offset and says when the text was truncated.",
    args_model=ReadFileArgs,
    approval="allow",
    capabilities=("fs.read",),
    path_params=("path",),
)
WRITE_FILE = ToolDescriptor(
    name="write_file",
    description="Write a text file, replacing it if it exists. Parent directories are created.",
    args_model=WriteFileArgs,
    approval="ask",
    capabilities=("fs.write",),
    path_params=("path",),
)
LIST_FILES = ToolDescriptor(
    name="list_files",
    description="List files below a directory that match a glob pattern (sorted, relative paths).",
    args_model=ListFilesArgs,
    approval="allow",
    capabilities=("fs.read",),
    path_params=("path",),
)

_IMPL = "llm_do.stdlib.filesystem.toolset:FilesystemToolset"


def _filesystem(name: str, root: Literal["project", "cwd"], writable: bool) -> ToolsetDescriptor:
    where = "the project root" if root == "project" else "the directory the run was started in"
    mode = "Read, write and list" if writable else "Read and list"
    return ToolsetDescriptor(
        name=name,
        description=f"{mode} files below {where}.",
        root=root,
        settings_model=FilesystemSettings,
        tools=(READ_FILE, WRITE_FILE, LIST_FILES) if writable else (READ_FILE, LIST_FILES),
        implementation=_IMPL,
    )


FILESYSTEM_PROJECT = _filesystem("filesystem_project", "project", writable=True)
FILESYSTEM_PROJECT_RO = _filesystem("filesystem_project_ro", "project", writable=False)
FILESYSTEM_CWD = _filesystem("filesystem_cwd", "cwd", writable=True)
FILESYSTEM_CWD_RO = _filesystem("filesystem_cwd_ro", "cwd", writable=False)
