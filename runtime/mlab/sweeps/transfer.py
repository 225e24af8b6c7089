"""Moving run folders between a sweep and the machines that run them, as tar blobs.

A worker sends its run folder home in pieces while the run goes on: each piece holds the files
that changed since the last one and the trace records appended since. Objects are written
before the trace record that names them, and the trace's length is taken before the files are
looked at, so every piece leaves the sweep's copy a resumable run: if the worker is lost, the
copy continues from the last record that reached it. The workspace and live script output
travel with the last piece only; a resume rebuilds the workspace from the snapshots.
"""
from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from mlab.locks import RUN_LOCK
from mlab.snapshots import PREFIX as STORE_TEMPORARY

TRACE = "trace.jsonl"
LATE_ONLY = ("workspace", "output")  # sent with the last piece only
_GUARD = 64  # bytes before the sent end of the trace, checked so a rewritten trace is sent whole


def _skipped(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name == RUN_LOCK or name.startswith(STORE_TEMPORARY) or name.endswith(".tmp")


def _walk(folder: Path, late: bool):
    """(relative path, path) of the files and links in a run folder worth sending."""
    for root, dirs, files in os.walk(folder):
        rel_root = os.path.relpath(root, folder)
        if rel_root == ".":
            dirs[:] = [d for d in dirs if late or d not in LATE_ONLY]
        entries = files + [d for d in dirs if os.path.islink(os.path.join(root, d))]
        for name in entries:
            rel = name if rel_root == "." else f"{rel_root}/{name}".replace(os.sep, "/")
            if not _skipped(rel):
                yield rel, Path(root) / name


def pack(folder: Path, paths: list[str]) -> bytes:
    """A tar of these files of folder (links kept as links)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for rel in paths:
            try:
                tar.add(folder / rel, arcname=rel, recursive=False)
            except FileNotFoundError:
                continue  # removed since it was listed: the next piece says so
    return buffer.getvalue()


def pack_folder(folder: Path, late: bool = True) -> bytes:
    """A whole folder as a tar (without the workspace and output when late is False)."""
    return pack(folder, [rel for rel, _ in _walk(Path(folder), late)])


def unpack(blob: bytes, target: Path) -> None:
    """Extract a tar made by pack into target (nothing may land outside it)."""
    Path(target).mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r") as tar:
        if hasattr(tarfile, "tar_filter"):
            tar.extractall(target, filter="tar")
        else:   # Python before 3.11.4 has no extraction filters: the same refusals, checked here
            tar.extractall(target, members=_inside(tar.getmembers(), Path(target)))


def _inside(members: list[tarfile.TarInfo], target: Path) -> list[tarfile.TarInfo]:
    """The members, once each is known to land inside target, as the "tar" filter has it: no
    absolute or climbing name, nothing written through a link of the archive (a link may point
    anywhere: it stays a link), no hard link to a file outside, no device; high mode bits
    cleared. tarfile.TarError otherwise."""
    root = os.path.realpath(target)
    links = {os.path.normpath(m.name) for m in members if m.issym()}

    def inside(path: str) -> bool:
        return os.path.commonpath([root, os.path.normpath(path)]) == root

    for member in members:
        name = os.path.normpath(member.name)
        if os.path.isabs(member.name) or not inside(os.path.join(root, name)):
            raise tarfile.TarError(f"{member.name!r} would land outside {target}")
        if any(str(parent) in links for parent in Path(name).parents):
            raise tarfile.TarError(f"{member.name!r} would be written through a link")
        if member.islnk() and not inside(os.path.join(root, os.path.normpath(member.linkname))):
            raise tarfile.TarError(f"the hard link {member.name!r} leads outside {target}")
        if member.ischr() or member.isblk() or member.isfifo():
            raise tarfile.TarError(f"{member.name!r} is a device or pipe")
        member.mode &= 0o755   # no set-id, sticky, group or other write bits
    return members


class FolderSender:
    """On the worker: what changed in a run folder since the last piece."""

    def __init__(self, folder: Path, already_there: bool = False):
        self.folder = Path(folder)
        self.sent: dict[str, tuple[int, int]] = {}
        self.trace_sent = 0
        self._guard: bytes | None = None
        if already_there:  # the folder came from the sweep (a resume): send only what changes
            self.sent = {rel: self._signature(path) for rel, path in _walk(self.folder, True) if rel != TRACE}
            self.trace_sent = self._trace_size()
            self._guard = self._read_guard(self.trace_sent)

    @staticmethod
    def _signature(path: Path) -> tuple[int, int]:
        stat = os.lstat(path)
        return stat.st_size, stat.st_mtime_ns

    def _trace_size(self) -> int:
        try:
            return (self.folder / TRACE).stat().st_size
        except OSError:
            return 0

    def collect(self, final: bool) -> dict | None:
        """The next piece: {"files": tar, "trace": (offset, bytes), "manifest": [...] on the last}."""
        trace_size = self._trace_size()  # first: records up to here name objects already written
        changed, present = [], []
        for rel, path in _walk(self.folder, final):
            if rel == TRACE:
                continue
            present.append(rel)
            try:
                signature = self._signature(path)
            except FileNotFoundError:
                continue
            if self.sent.get(rel) != signature:
                changed.append(rel)
                self.sent[rel] = signature
        trace = self._trace_piece(trace_size, final)
        if not changed and trace is None and not final:
            return None
        piece = {"files": pack(self.folder, changed) if changed else b"", "trace": trace}
        if final:
            piece["manifest"] = present + [TRACE]
        return piece

    def _trace_piece(self, size: int, final: bool) -> tuple[int, bytes] | None:
        offset = self.trace_sent
        try:
            with open(self.folder / TRACE, "rb") as handle:
                if offset > size or (offset and not self._guard_holds(handle, offset)):
                    offset = 0  # the trace was cut (a resume dropped a torn record): send it whole
                handle.seek(offset)
                data = handle.read(size - offset)
        except OSError:
            return None
        if not final:
            data = data[:data.rfind(b"\n") + 1]  # whole records only
        if not data and offset == self.trace_sent:
            return None
        self.trace_sent = offset + len(data)
        self._guard = self._read_guard(self.trace_sent)
        return offset, data

    def _read_guard(self, end: int) -> bytes:
        try:
            with open(self.folder / TRACE, "rb") as handle:
                handle.seek(max(end - _GUARD, 0))
                return handle.read(min(_GUARD, end))
        except OSError:
            return b""

    def _guard_holds(self, handle, offset: int) -> bool:
        expected = self._guard or b""
        handle.seek(max(offset - _GUARD, 0))
        return handle.read(min(_GUARD, offset)) == expected


def apply_piece(folder: Path, piece: dict) -> None:
    """In the sweep: bring the local copy of a run folder up to the worker's piece."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if piece.get("files"):
        unpack(piece["files"], folder)
    if piece.get("trace") is not None:
        offset, data = piece["trace"]
        path = folder / TRACE
        path.touch()
        with open(path, "r+b") as handle:
            have = handle.seek(0, os.SEEK_END)
            if have < offset:
                raise OSError(f"the trace of run {folder.name} lost a piece (the sweep has {have} bytes, "
                              f"the worker sent from byte {offset})")
            handle.seek(offset)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
    for sub in LATE_ONLY:
        (folder / sub).mkdir(exist_ok=True)
    if "manifest" in piece:
        keep = set(piece["manifest"])
        for sub in LATE_ONLY:  # files the run removed from its workspace or output
            for rel, path in list(_walk(folder / sub, True)):
                if f"{sub}/{rel}" not in keep:
                    path.unlink()
