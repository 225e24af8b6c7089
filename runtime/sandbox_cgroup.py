"""A cgroup (v2) per script, where mlab may make one: the kernel then limits and counts the tree.

A cgroup can be made when this process's own cgroup, or the one named by
$MLAB_CGROUP (a folder delegated to mlab, e.g. by systemd's Delegate=yes),
already enables the memory controller for its children and is writable. Then
the script's tree gets memory.max (no swap), an OOM kill of the whole group,
the kernel's peak memory and CPU time, and an atomic kill. Anywhere else
(cgroup v1, no delegation, a container without write access) this module
answers None and the watchdog over /proc does the job alone.
"""
from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_VARIABLE = "MLAB_CGROUP"
_names = itertools.count()


def _cgroup2_mount() -> str | None:
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        before, _, after = line.partition(" - ")
        if after.split()[:1] == ["cgroup2"]:
            return before.split()[4]
    return None


def delegated_base() -> Path | None:
    """The cgroup under which script cgroups may be made, or None."""
    explicit = os.environ.get(CGROUP_VARIABLE)
    if explicit:
        base = Path(explicit)
    else:
        mount = _cgroup2_mount()
        try:
            own = next(line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines()
                       if line.startswith("0::"))
        except (OSError, StopIteration):
            return None
        if mount is None:
            return None
        base = Path(mount) / own.strip().lstrip("/")
    try:
        enabled = (base / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if "memory" not in enabled or not os.access(base, os.W_OK):
        return None
    return base


@dataclass(frozen=True)
class CgroupUsage:
    """The kernel's account of a script cgroup (None where this kernel does not keep it)."""

    peak_memory_bytes: int | None
    cpu_s: float | None
    oom_kills: int


class ScriptCgroup:
    """One script's cgroup: made before the script, removed after it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, memory_bytes: int | None) -> ScriptCgroup | None:
        """A new cgroup with the memory limit, or None where none can be made."""
        base = delegated_base()
        if base is None:
            return None
        path = base / f"mlab-script-{os.getpid()}-{next(_names)}"
        try:
            path.mkdir()
        except OSError:
            return None
        group = cls(path)
        try:
            if memory_bytes is not None:
                group._write("memory.max", str(memory_bytes))
                group._write_if_present("memory.swap.max", "0")
            # One OOM kill takes the whole tree, not a random worker.
            group._write_if_present("memory.oom.group", "1")
        except OSError:
            group.remove()
            return None
        return group

    @property
    def procs_file(self) -> str:
        """The file a process writes "0" to in order to join."""
        return str(self.path / "cgroup.procs")

    def _write(self, name: str, value: str) -> None:
        with open(self.path / name, "w") as handle:
            handle.write(value)

    def _write_if_present(self, name: str, value: str) -> None:
        if (self.path / name).exists():
            self._write(name, value)

    def _read_keys(self, name: str) -> dict[str, int]:
        try:
            lines = (self.path / name).read_text().splitlines()
        except OSError:
            return {}
        pairs = (line.split() for line in lines)
        return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}

    def usage(self) -> CgroupUsage:
        try:
            peak: int | None = int((self.path / "memory.peak").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            peak = None   # memory.peak needs Linux 5.19
        usec = self._read_keys("cpu.stat").get("usage_usec")
        return CgroupUsage(peak_memory_bytes=peak, cpu_s=None if usec is None else usec / 1e6,
                           oom_kills=self._read_keys("memory.events").get("oom_kill", 0))

    def kill(self) -> None:
        """Kill every process in the cgroup at once (Linux 5.14 and later)."""
        try:
            self._write_if_present("cgroup.kill", "1")
        except OSError:
            pass

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (it is retried briefly)."""
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill()
                time.sleep(0.01)
