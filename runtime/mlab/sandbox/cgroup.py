"""A cgroup per script, where mlab may make one: the kernel then limits and counts the tree.

cgroup v2: a cgroup can be made when this process's own cgroup, or the one
named by $MLAB_CGROUP (a folder delegated to mlab, e.g. by systemd's
Delegate=yes), already enables the memory controller for its children and is
writable. The script's tree then gets memory.max (no swap), an OOM kill of the
whole group, pids.max where the pids controller is enabled, the kernel's peak
memory and CPU time, and an atomic kill.

cgroup v1 (or a hybrid layout, where v2 has no controllers): a root harness can
make a child in the v1 `pids` hierarchy (pids.max, and pids.events counts the
forks it refused) and, where mounted, in `cpuacct` (the tree's CPU time, kept
whoever reaps), in `freezer`, and in the v2 hierarchy of a hybrid layout (no
controllers, but its cgroup.freeze and cgroup.kill). Memory stays with the
watchdog over /proc, which measures what the script allocated rather than the
page cache v1 would charge.

The kill cannot be outrun by a fork bomb: the group is frozen first (v2's
cgroup.freeze, else v1's freezer), so no member can fork while the others die,
then killed at once (cgroup.kill) or member by member while frozen.

Anywhere else (no delegation, a container without write access, $MLAB_CGROUP
naming a folder that cannot serve) this module answers None and the watchdog
does the job alone.
"""
from __future__ import annotations

import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_VARIABLE = "MLAB_CGROUP"
_names = itertools.count()


def _mounts() -> list[tuple[str, str, str, list[str]]]:
    """(filesystem type, mount point, root inside the hierarchy, super options) of each cgroup mount."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, rest = before.split(), after.split()
        if rest[:1] in (["cgroup"], ["cgroup2"]) and len(fields) >= 5 and len(rest) >= 3:
            found.append((rest[0], fields[4], fields[3], rest[2].split(",")))
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 path."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    own: dict[str, str] = {}
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                own[controller] = parts[2]
    return own


def _folder(mount_point: str, mount_root: str, path: str) -> Path:
    """The folder of cgroup `path` under a mount that shows the hierarchy from mount_root."""
    relative = os.path.relpath(path, mount_root) if mount_root != "/" else path.lstrip("/")
    return Path(mount_point) / ("" if relative == "." else relative)


def delegated_base() -> Path | None:
    """The cgroup v2 folder under which script cgroups may be made, or None."""
    explicit = os.environ.get(CGROUP_VARIABLE)
    if explicit:
        base = Path(explicit)
    else:
        mount = next(((point, root) for kind, point, root, _ in _mounts() if kind == "cgroup2"), None)
        own = _own_cgroups().get("")
        if mount is None or own is None:
            return None
        base = _folder(mount[0], mount[1], own)
    try:
        enabled = (base / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if "memory" not in enabled or not os.access(base, os.W_OK):
        return None
    return base


def v1_bases() -> dict[str, Path]:
    """Writable v1 folders of this process for the pids, cpuacct and freezer controllers (pids
    required), and under "unified" its folder in a hybrid layout's v2 hierarchy."""
    own = _own_cgroups()
    bases: dict[str, Path] = {}
    for kind, point, root, options in _mounts():
        for controller in ("pids", "cpuacct", "freezer"):
            if kind == "cgroup" and controller in options and controller in own:
                folder = _folder(point, root, own[controller])
                if os.access(folder, os.W_OK):
                    bases[controller] = folder
        if kind == "cgroup2" and "" in own and "unified" not in bases:
            folder = _folder(point, root, own[""])
            if os.access(folder, os.W_OK):
                bases["unified"] = folder
    return bases if "pids" in bases else {}


@dataclass(frozen=True)
class CgroupUsage:
    """The kernel's account of a script cgroup (None where this kernel does not keep it)."""

    peak_memory_bytes: int | None
    cpu_s: float | None
    oom_kills: int


def _read_keys(path: Path) -> dict[str, int]:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    pairs = (line.split() for line in lines)
    return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}


class ScriptCgroup:
    """One script's cgroup (v2): made before the script, removed after it."""

    version = 2

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, memory_bytes: int | None, max_tasks: int | None = None) -> ScriptCgroup | None:
        """A new cgroup with the memory limit and task budget, or None where none can be made.

        $MLAB_CGROUP names the one place to use; without it a delegated v2
        cgroup is preferred and a v1 pids child is the fallback.
        """
        base = delegated_base()
        if base is None:
            return None if os.environ.get(CGROUP_VARIABLE) else ScriptCgroupV1.create(max_tasks)
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
            if max_tasks is not None:
                group._write_if_present("pids.max", str(max_tasks))
        except OSError:
            group.remove()
            return None
        return group

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes "0" to in order to join."""
        return [str(self.path / "cgroup.procs")]

    optional_procs_files: list[str] = []

    @property
    def keeps_cpu_account(self) -> bool:
        """Whether the CPU time of killed processes stays counted, whoever reaps them."""
        return True

    @property
    def budgets_tasks(self) -> bool:
        """Whether pids.max holds the script's tasks (the pids controller is enabled here)."""
        return (self.path / "pids.max").exists()

    def _write(self, name: str, value: str) -> None:
        with open(self.path / name, "w") as handle:
            handle.write(value)

    def _write_if_present(self, name: str, value: str) -> None:
        if (self.path / name).exists():
            self._write(name, value)

    def budget_reached(self) -> bool:
        """Whether the kernel has refused a fork or clone for the task budget."""
        return _read_keys(self.path / "pids.events").get("max", 0) > 0

    def usage(self) -> CgroupUsage:
        try:
            peak: int | None = int((self.path / "memory.peak").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            peak = None   # memory.peak needs Linux 5.19
        usec = _read_keys(self.path / "cpu.stat").get("usage_usec")
        return CgroupUsage(peak_memory_bytes=peak, cpu_s=None if usec is None else usec / 1e6,
                           oom_kills=_read_keys(self.path / "memory.events").get("oom_kill", 0))

    def kill(self) -> None:
        """Kill every process in the cgroup: frozen first, so none forks meanwhile, then all at
        once (cgroup.kill, Linux 5.14 and later), else member by member (a frozen pid stays
        its process: it cannot exit before the kill)."""
        freeze_and_kill(self.path)

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (it is retried briefly)."""
        _remove_folder(self.path, self.kill)


def freeze_and_kill(folder: Path) -> None:
    """Freeze a v2 cgroup (cgroup.freeze), then kill its members; a fatal signal ends a frozen task."""
    try:
        (folder / "cgroup.freeze").write_text("1")
    except OSError:
        pass   # the root cgroup, or a kernel before 5.2: killed unfrozen
    try:
        if (folder / "cgroup.kill").exists():
            (folder / "cgroup.kill").write_text("1")
            return
    except OSError:
        pass
    for pid in _members(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _members(folder: Path) -> list[int]:
    try:
        return [int(word) for word in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _remove_folder(path: Path, kill) -> None:
    for _ in range(100):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            kill()
            time.sleep(0.01)


class ScriptCgroupV1:
    """One script's v1 cgroups: a pids child (the task budget) and a cpuacct child where mounted."""

    version = 1

    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths

    @classmethod
    def create(cls, max_tasks: int | None) -> ScriptCgroupV1 | None:
        bases = v1_bases()
        if not bases:
            return None
        name = f"mlab-script-{os.getpid()}-{next(_names)}"
        made: dict[str, Path] = {}
        for controller, base in bases.items():
            try:
                (base / name).mkdir()
            except OSError:
                continue
            made[controller] = base / name
        group = cls(made)
        if "pids" not in made:
            group.remove()
            return None
        try:
            if max_tasks is not None:
                with open(made["pids"] / "pids.max", "w") as handle:
                    handle.write(str(max_tasks))
        except OSError:
            group.remove()
            return None
        return group

    @property
    def procs_files(self) -> list[str]:
        return [str(self.paths[c] / "cgroup.procs") for c in ("pids", "cpuacct") if c in self.paths]

    @property
    def optional_procs_files(self) -> list[str]:
        """The groups that only make the kill atomic: a script that cannot join them still runs."""
        return [str(self.paths[c] / "cgroup.procs") for c in ("freezer", "unified") if c in self.paths]

    @property
    def keeps_cpu_account(self) -> bool:
        return "cpuacct" in self.paths

    budgets_tasks = True

    def budget_reached(self) -> bool:
        return _read_keys(self.paths["pids"] / "pids.events").get("max", 0) > 0

    def usage(self) -> CgroupUsage:
        cpu_s = None
        if "cpuacct" in self.paths:
            try:
                cpu_s = int((self.paths["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
            except (OSError, ValueError):
                cpu_s = None
        return CgroupUsage(peak_memory_bytes=None, cpu_s=cpu_s, oom_kills=0)

    def members(self) -> list[int]:
        return _members(self.paths["pids"])

    def kill(self) -> None:
        """SIGKILL every member, none able to fork meanwhile: through the hybrid layout's v2
        cgroup where there is one (frozen, then cgroup.kill), else frozen by the v1 freezer and
        killed member by member, else pinned by pid fds and killed."""
        unified = self.paths.get("unified")
        if unified is not None and (unified / "cgroup.kill").exists() and _members(unified):
            freeze_and_kill(unified)   # the script joined it: all of the tree is there
            return
        freezer = self.paths.get("freezer")
        frozen = freezer is not None and bool(_members(freezer)) and _freeze_v1(freezer, "FROZEN")
        pinned = []
        for pid in self.members():
            try:
                pinned.append((pid, os.pidfd_open(pid)))
            except OSError:
                continue
        still = set(self.members())   # read once: a pid pinned and still a member is no recycled one
        for pid, pidfd in pinned:
            try:
                if pid in still:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(pidfd)
        if frozen:
            _freeze_v1(freezer, "THAWED")   # the killed members die once thawed

    def remove(self) -> None:
        for path in self.paths.values():
            _remove_folder(path, self.kill)


def _freeze_v1(folder: Path, state: str, wait_s: float = 1.0) -> bool:
    """Set a v1 freezer cgroup's state; for FROZEN, wait (bounded) until the kernel says so."""
    try:
        (folder / "freezer.state").write_text(state)
    except OSError:
        return False
    if state != "FROZEN":
        return True
    until = time.monotonic() + wait_s
    while time.monotonic() < until:
        try:
            if (folder / "freezer.state").read_text().strip() == "FROZEN":
                return True
        except OSError:
            return False
        time.sleep(0.002)
    return True   # still FREEZING: what is frozen cannot fork; the rest is killed all the same
