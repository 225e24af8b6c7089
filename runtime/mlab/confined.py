"""The one way the harness reads and writes files that an agent or its scripts could have made.

The workspace is the agent's: anything in it may be a symbolic link to the run's private
answers, a hard link to a file outside, a named pipe that blocks a reader forever, or a device.
The harness runs outside the sandbox, so a plain `open()` of a workspace path would follow
such a file wherever it points. Everything here opens a workspace-relative path one component
at a time from the root's file descriptor (openat with O_NOFOLLOW), so no link is followed at
any level; checks the opened descriptor itself (fstat: a regular file with a single name) and
where the kernel says it lies (/proc/self/fd), so nothing can be swapped between the check and
the read. A refusal is a `Refused` whose message says what the file is and why it is not read.

Readers: `open_file` (a verified descriptor), `open_named` (the same of a file named in its folder), `check` (what is at a path), `read_bytes`, `open_binary`, `copy_out` (into a
harness-owned file) and `walk` (every entry of a tree, never entering a link). Writers, for
restoring snapshots into a folder that may hold the agent's links: `write_file` and
`write_symlink` replace a link or special file in their way instead of writing through it.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from mlab.errors import MlabError
from mlab.tree import remove_tree, walk_tree

NEVER_FOLLOWS = "the harness never follows links out of the workspace"
CHUNK = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", 0)
_WALK_FLAGS = _DIR_FLAGS & ~getattr(os, "O_PATH", 0)  # a folder to make entries in
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Refused(MlabError):
    """A workspace file the harness will not read or write through; the message says why."""


@dataclass(frozen=True)
class Entry:
    """One thing found by `walk`: its workspace-relative path, what it is, and its lstat."""

    rel: str
    kind: str  # "file" (regular), "folder", "symlink", "hardlink" (a regular file with other names), "special"
    info: os.stat_result

    def why_skipped(self, root: Path) -> str:
        """Why a non-"file" entry is not read, in the words of a refusal."""
        return describe(self.rel, self.info, _link_text(Path(root) / self.rel))


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words."""
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file")):
        if test(mode):
            return words
    return "a special file"


def describe(rel: str, info: os.stat_result, target: str | None = None) -> str:
    """The refusal message for a file that is not a plain, single-named regular file."""
    if stat.S_ISLNK(info.st_mode):
        return f"{rel} is a symbolic link to {target or '(unreadable)'}; {NEVER_FOLLOWS}, so write the file itself"
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        return (f"{rel} is a hard link (the file has {info.st_nlink} names); the harness reads only files with a "
                f"single name, so that no file outside the workspace can be passed in; write a copy instead")
    if stat.S_ISDIR(info.st_mode):
        return f"{rel} is a folder, not a file"
    return f"{rel} is {kind_of(info.st_mode)}, not a regular file; the harness reads only regular files"


def _link_text(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _parts(rel: str | os.PathLike) -> list[str]:
    text = os.fspath(rel)
    if "\x00" in text:
        raise Refused(f"{text!r} contains a NUL character")
    if text.startswith("/"):
        raise Refused(f"{text} is an absolute path; the harness reads only paths inside the workspace")
    parts = [p for p in PurePosixPath(text).parts if p != "."]
    if ".." in parts:
        raise Refused(f"{text} leads out of its folder (`..`); the harness reads only paths inside the workspace")
    if not parts:
        raise Refused(f"{text!r} names the workspace itself, not a file")
    return parts


def _open_root(root: Path, flags: int) -> int:
    """The root is the harness's own folder: its real path is opened (it may sit under a linked /tmp)."""
    return os.open(os.path.realpath(root), flags & ~os.O_NOFOLLOW)


def _descend(root: Path, parts: list[str], flags: int, ready: Callable[[int, int, str], None]) -> int:
    """A descriptor of the folder holding parts[-1], opened one folder at a time from root.

    Before each folder is entered, ready(fd, index, name) makes sure that what is at `name` in
    the folder `fd` is a real folder (refusing or replacing anything else), so that opening it
    with O_NOFOLLOW follows no link. On any error every descriptor is closed.
    """
    fd = _open_root(root, flags)
    try:
        for index, name in enumerate(parts[:-1]):
            ready(fd, index, name)
            child = os.open(name, flags, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_parent(root: Path, parts: list[str], rel: str) -> int:
    """A descriptor of the folder holding the last part, reached without following any link."""
    def refuse_non_folders(fd: int, index: int, name: str) -> None:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            where = "/".join(parts[:index + 1])
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(name, dir_fd=fd)
                raise Refused(f"{rel} passes through {where}, a symbolic link to {target}; {NEVER_FOLLOWS}")
            raise NotADirectoryError(f"{where} is {kind_of(info.st_mode)}, not a folder")

    return _descend(root, parts, _DIR_FLAGS, refuse_non_folders)


def _inside(root: Path, fd: int) -> bool:
    """Whether the kernel places the open file under root (True where /proc is not there to ask)."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True
    base = os.path.realpath(root)
    return real.startswith(base.rstrip("/") + "/")


def open_file(root: Path, rel: str | os.PathLike, max_names: int = 1) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file `rel` inside `root` and its fstat; the caller closes it.

    Refused for a link (at any level), a special file, a file with several names, or a file the
    kernel places outside root; FileNotFoundError when there is nothing at that path.
    max_names: the hard links allowed, for a caller that has seen every one of them inside root.
    """
    root = Path(root)
    parts = _parts(rel)
    shown = "/".join(parts)
    parent = _open_parent(root, parts, shown)
    try:
        info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > max_names:
            target = os.readlink(parts[-1], dir_fd=parent) if stat.S_ISLNK(info.st_mode) else None
            raise Refused(describe(shown, info, target))
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=parent)
        except OSError as error:  # swapped for a link since the check: ELOOP
            raise Refused(f"{shown} changed while it was being opened ({error.strerror}); {NEVER_FOLLOWS}") from None
    finally:
        os.close(parent)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > max_names:
            raise Refused(describe(shown, info))
        if not _inside(root, fd):
            raise Refused(f"{shown} lies outside the workspace; {NEVER_FOLLOWS}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_named(path: Path, max_names: int = 1) -> tuple[int, os.stat_result]:
    """open_file(path.parent, path.name): the file named directly in a folder of the harness (a run
    folder's result.json), as open_file opens it, in three system calls where open_file takes a
    dozen (a report reads five files of each of thousands of runs): its lstat, an open that follows
    no link and does not block, the fstat of the same regular file. A file named in its own folder
    cannot lie outside it, so open_file's further check has nothing to add; anything but a plain
    file goes through open_file, whose refusal says what it is."""
    try:
        seen = os.stat(path, follow_symlinks=False)
        fd = os.open(path, _FILE_FLAGS) if stat.S_ISREG(seen.st_mode) and seen.st_nlink <= max_names else None
    except OSError:
        fd = None   # never a pipe or a device opened, nor a link followed (O_NOFOLLOW)
    if fd is not None:
        try:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) == (seen.st_dev, seen.st_ino) and info.st_nlink <= max_names:
                os.set_blocking(fd, True)
                return fd, info
        except OSError:
            pass
        os.close(fd)   # swapped since the lstat: open_file says what is there now
    path = Path(path)
    return open_file(path.parent, path.name, max_names)


def check(root: Path, rel: str | os.PathLike) -> os.stat_result:
    """The lstat of `rel` inside root when it is a folder or a plain regular file, reached without
    following links; Refused for anything else, FileNotFoundError when there is nothing there."""
    parts = _parts(rel)
    shown = "/".join(parts)
    parent = _open_parent(Path(root), parts, shown)
    try:
        info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode) and (not stat.S_ISREG(info.st_mode) or info.st_nlink > 1):
            target = os.readlink(parts[-1], dir_fd=parent) if stat.S_ISLNK(info.st_mode) else None
            raise Refused(describe(shown, info, target))
    finally:
        os.close(parent)
    return info


def open_binary(root: Path, rel: str | os.PathLike, max_names: int = 1):
    """The verified file `rel` inside root, opened for reading bytes (a context manager)."""
    fd, _ = open_file(root, rel, max_names)
    return os.fdopen(fd, "rb")


def read_bytes(root: Path, rel: str | os.PathLike, limit: int | None = None) -> bytes:
    """The contents of the verified file `rel`; Refused when it holds more than `limit` bytes."""
    with open_binary(root, rel) as handle:
        data = handle.read() if limit is None else handle.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise Refused(f"{os.fspath(rel)} holds more than {limit:,} bytes, the most the harness reads of it")
    return data


def copy_out(root: Path, rel: str | os.PathLike, destination: Path, limit: int | None = None,
             max_names: int = 1) -> int:
    """Copy the verified file `rel` into `destination` (a harness-owned path); returns the size the
    file had when opened. limit: copy at most limit + 1 bytes (enough to tell an over-large file)."""
    fd, info = open_file(root, rel, max_names)
    copied = 0
    with os.fdopen(fd, "rb") as source, open(destination, "wb") as target:
        while limit is None or copied <= limit:
            block = source.read(CHUNK if limit is None else min(CHUNK, limit + 1 - copied))
            if not block:
                break
            target.write(block)
            copied += len(block)
    return info.st_size


def walk(root: Path, folders: bool = False) -> Iterator[Entry]:
    """Every entry under root, without entering links (mlab.tree: iterative, so any depth is fine).

    Regular files with one name are "file"; links, files with several names and special files
    are reported with their kind and never opened; folders are "folder" entries when `folders`
    is set, each before its contents. Entries that vanish or cannot be listed are passed over.
    """
    for rel, _, info in walk_tree(root):
        if stat.S_ISDIR(info.st_mode):
            if folders:
                yield Entry(rel, "folder", info)
        elif stat.S_ISLNK(info.st_mode):
            yield Entry(rel, "symlink", info)
        elif stat.S_ISREG(info.st_mode):
            yield Entry(rel, "hardlink" if info.st_nlink > 1 else "file", info)
        else:
            yield Entry(rel, "special", info)


def copy_tree(source: Path, target: Path, skip=lambda rel: False, linked=lambda info: False) -> list[str]:
    """Copy the plain files of a workspace into a harness-owned folder (merging); the reasons for
    what was left out (links, files with several names, special files, files that changed).
    linked(info): whether a file with several names is one the harness linked in (read-only data)."""
    left_out = []
    for entry in walk(source, folders=True):
        if skip(entry.rel):
            continue
        if entry.kind == "folder":
            (Path(target) / entry.rel).mkdir(parents=True, exist_ok=True)
            continue
        names = entry.info.st_nlink if entry.kind == "hardlink" and linked(entry.info) else 1
        if entry.kind != "file" and names == 1:
            left_out.append(entry.why_skipped(source))
            continue
        destination = Path(target) / entry.rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            copy_out(source, entry.rel, destination, max_names=names)
        except (Refused, OSError) as problem:
            left_out.append(str(problem))
    return left_out


# -- writing into a folder that may hold the agent's links -------------------------------

def _clear(fd: int, name: str) -> None:
    """Remove whatever is at name in the folder fd (a link is removed, never followed)."""
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        remove_tree(os.path.join(f"/proc/self/fd/{fd}", name))  # links inside are removed, not followed
    else:
        os.unlink(name, dir_fd=fd)


def _folder_for_writing(root: Path, parts: list[str]) -> int:
    """A descriptor of the folder that will hold parts[-1], made as needed; a link or file in the
    way of a folder is replaced by a folder, so nothing is written through it."""
    def make_folder(fd: int, index: int, name: str) -> None:
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISDIR(info.st_mode):
            os.unlink(name, dir_fd=fd)
            info = None
        if info is None:
            os.mkdir(name, 0o755, dir_fd=fd)

    return _descend(root, parts, _WALK_FLAGS, make_folder)


def write_file(root: Path, rel: str, source) -> None:
    """Make `rel` inside root a new regular file holding source's bytes (source: a binary reader)."""
    parts = _parts(rel)
    folder = _folder_for_writing(Path(root), parts)
    try:
        _clear(folder, parts[-1])
        fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=folder)
    finally:
        os.close(folder)
    with os.fdopen(fd, "wb") as writer:
        copy_keeping_holes(source, writer)


def copy_keeping_holes(reader, writer, on_block=None) -> int:
    """Copy reader into writer, leaving a hole where a whole block is zeros: a sparse file stays
    sparse, never inflated to its apparent size. on_block(block) sees every block; returns the size."""
    size = 0
    while block := reader.read(CHUNK):
        if on_block is not None:
            on_block(block)
        if block.count(0) == len(block):
            writer.seek(len(block), os.SEEK_CUR)
        else:
            writer.write(block)
        size += len(block)
    writer.truncate(size)   # a file that ends in a hole still has its full length
    return size


def write_symlink(root: Path, rel: str, target: str) -> None:
    """Make `rel` inside root a symbolic link holding `target` (the link is made, never followed)."""
    parts = _parts(rel)
    folder = _folder_for_writing(Path(root), parts)
    try:
        try:
            if os.readlink(parts[-1], dir_fd=folder) == target:
                return
        except OSError:
            pass
        _clear(folder, parts[-1])
        os.symlink(target, parts[-1], dir_fd=folder)
    finally:
        os.close(folder)


# -- the one writer of the harness's own files into a workspace or a run folder -----------------
# A run folder may come from elsewhere and a workspace is the agent's: either may hold a link where
# the harness writes (problem.md linked to a host file, result.json.tmp to ~/.bashrc). The
# writers below reach the file's folder from `root` one component at a time without following a
# link, create their file with O_EXCL | O_NOFOLLOW, and check, once written, that the name now
# holds the very file written and that the kernel places it under root. A link in the way is
# replaced (the name is the harness's), never written through.

def _placed(root: Path, folder: int, name: str, fd: int, shown: str) -> None:
    """Refused unless `name` in `folder` is the file open as `fd`, and that file lies under root."""
    written, there = os.fstat(fd), os.stat(name, dir_fd=folder, follow_symlinks=False)
    if (written.st_dev, written.st_ino) != (there.st_dev, there.st_ino) or not _inside(root, fd):
        raise Refused(f"{shown} did not land where it was written (it was swapped meanwhile); {NEVER_FOLLOWS}")


def write_into(root: Path, rel: str | os.PathLike, data: bytes | str, *, sync: bool = False) -> Path:
    """Make `rel` inside root hold `data` (str: written as UTF-8), replaced whole: a reader sees
    the old file or the new one (sync: flushed to disk first). No link is followed at any level;
    one in the way is replaced. The project's one atomic writer (mlab.standard_json.write_json and
    write_lines go through it). Returns the path written; OSError and Refused are the caller's."""
    import secrets

    parts = _parts(rel)
    shown = "/".join(parts)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = _folder_for_writing(Path(root), parts)
    try:
        for _ in range(100):
            temp = f".{parts[-1][:200]}.{secrets.token_hex(4)}.tmp"
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                             dir_fd=folder)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"cannot make a temporary file beside {shown}")
        try:
            with os.fdopen(fd, "wb", closefd=False) as handle:
                handle.write(payload)
                if sync:
                    handle.flush()
                    os.fsync(fd)
            info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False) if _exists(folder, parts[-1]) else None
            if info is not None and stat.S_ISDIR(info.st_mode):
                _clear(folder, parts[-1])   # a folder planted where the file goes
            os.replace(temp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)   # replaces a link, never follows it
            _placed(Path(root), folder, parts[-1], fd, shown)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=folder)
            except OSError:
                pass
            raise
        finally:
            os.close(fd)
    finally:
        os.close(folder)
    return Path(root).joinpath(*parts)


def _exists(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def open_for_append(root: Path, rel: str | os.PathLike, *, truncate: bool = False) -> int:
    """A descriptor appending to the regular file `rel` inside root (made when missing; truncate:
    emptied first), reached without following any link; a link or special file at that name is
    replaced by a new empty file and a file with several names by a copy of its own (the other
    names may lie outside), never written through. The caller closes it."""
    parts = _parts(rel)
    shown = "/".join(parts)
    if not truncate:
        try:
            fd, info = open_file(root, rel, max_names=1 << 30)
        except (Refused, OSError):
            pass   # nothing there, or a link or special file: replaced below
        else:
            with os.fdopen(fd, "rb") as handle:
                if info.st_nlink > 1:   # a file with other names: a copy of its own, appended to alone
                    write_into(root, rel, handle.read())
    folder = _folder_for_writing(Path(root), parts)
    try:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        for _ in range(3):
            try:
                info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                info = None
            if info is not None and (not stat.S_ISREG(info.st_mode) or info.st_nlink > 1):
                _clear(folder, parts[-1])   # a planted link, pipe, device or second name: not ours to write to
            try:
                fd = os.open(parts[-1], flags | (os.O_TRUNC if truncate else 0), 0o644, dir_fd=folder)
            except OSError:   # swapped for a link or a pipe since the check: look again
                continue
            try:
                opened = os.fstat(fd)
                if stat.S_ISREG(opened.st_mode) and opened.st_nlink == 1:
                    _placed(Path(root), folder, parts[-1], fd, shown)
                    os.set_blocking(fd, True)
                    return fd
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        raise Refused(f"{shown} keeps changing into something other than a plain file; {NEVER_FOLLOWS}")
    finally:
        os.close(folder)
