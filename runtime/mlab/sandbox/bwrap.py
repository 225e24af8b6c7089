"""The bubblewrap command for one script: what is bound, what is masked, which flags.

The sandbox's root starts empty: only what is bound here exists inside. The
system (/usr, the /lib and /bin links, a few /etc files) and the interpreter's
installation are read-only; the workspace is read-write at its own path; /tmp
and /dev/shm are fresh, size-bounded tmpfs; the root is remounted read-only at
the end so nothing else can be written. Anything that must stay invisible but
lies under a bound path (an installed mlab/mlabc with its task data, caches,
policy.hidden) is covered by an empty read-only mount.
"""
from __future__ import annotations

import functools
import glob
import json
import os
import subprocess
from dataclasses import dataclass

SYSTEM_DIRS = ("/usr",)
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs commonly read from /etc: the loader cache, name service files,
# time zone, certificates, fonts, alternatives. Everything else stays out.
ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "passwd", "group",
    "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf", "services", "protocols",
    "networks", "ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
    "alternatives", "fonts", "mime.types", "os-release", "debian_version", "locale.alias",
    "python3", "python3.11", "matplotlibrc",
)
PACKAGE_NAMES = ("mlab", "mlabc")


@dataclass(frozen=True)
class BwrapFeatures:
    """Options this bubblewrap understands (older releases lack some)."""

    size: bool
    disable_userns: bool
    json_status: bool


@functools.lru_cache(maxsize=8)
def bwrap_features(bwrap: str) -> BwrapFeatures:
    """Read the supported options from `bwrap --help`."""
    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10,
                              start_new_session=True).stdout  # a Ctrl-C for the harness must not kill it
    except (OSError, subprocess.SubprocessError):
        text = ""
    return BwrapFeatures(size="--size" in text, disable_userns="--disable-userns" in text,
                         json_status="--json-status-fd" in text)


@dataclass(frozen=True)
class InterpreterLayout:
    """Where an interpreter's installation lives, as the interpreter itself reports it."""

    roots: tuple[str, ...]          # prefixes and the executable's folder, real paths
    package_dirs: tuple[str, ...]   # site-packages and dist-packages on its sys.path


_LAYOUT_PROBE = (
    "import json, os, sys\n"
    "print(json.dumps({'prefixes': [sys.prefix, sys.base_prefix, sys.exec_prefix,"
    " sys.base_exec_prefix], 'executable': sys.executable, 'path': sys.path}))\n"
)


@functools.lru_cache(maxsize=16)
def interpreter_layout(python: str) -> InterpreterLayout:
    """Ask python where it is installed (once per interpreter and process)."""
    try:
        done = subprocess.run([python, "-I", "-c", _LAYOUT_PROBE], capture_output=True,
                              text=True, timeout=60, start_new_session=True)  # out of reach of a Ctrl-C
        facts = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        raise ValueError(f"cannot run the interpreter {python!r}: {error}") from None
    roots = {os.path.realpath(p) for p in facts["prefixes"] if p}
    for executable in (python, facts["executable"]):
        if executable:
            roots.add(os.path.dirname(os.path.abspath(executable)))
            roots.add(os.path.dirname(os.path.realpath(executable)))
    package_dirs = tuple(sorted({os.path.realpath(p) for p in facts["path"]
                                 if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)}))
    return InterpreterLayout(roots=tuple(sorted(_outermost(r for r in roots if os.path.isdir(r)))),
                             package_dirs=package_dirs)


def is_within(path: str, root: str) -> bool:
    """True when path is root or lies below it (both absolute and normalised)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _outermost(paths) -> list[str]:
    """Drop every path that lies inside another one of the list."""
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(is_within(path, other) for other in kept):
            kept.append(path)
    return kept


def _mask(path: str) -> tuple[list[list[str]], list[list[str]]]:
    """Ops that cover path with something empty, and ops that make that read-only.

    The second part is applied after the workspace is bound, since a covered
    folder may be an ancestor in which the workspace's mount point is made.
    """
    if os.path.isdir(path):
        return [["--tmpfs", path]], [["--remount-ro", path]]
    return [["--ro-bind", "/dev/null", path]], []


def gpu_device_nodes() -> list[str]:
    """The NVIDIA device nodes of this machine (empty on a machine without GPUs)."""
    return sorted(glob.glob("/dev/nvidia*"))


@dataclass(frozen=True)
class BwrapCommand:
    """Flags, then filesystem operations in order (each a list: option, arguments)."""

    flags: list[str]
    ops: list[list[str]]


def build_bwrap_command(*, workspace: str, layout: InterpreterLayout, hidden: list[str],
                        read_only: list[str], network: bool, gpu: bool, tmpfs_bytes: int,
                        features: BwrapFeatures, extra_binds=()) -> BwrapCommand:
    """The bubblewrap flags and mount operations for one script run.

    workspace, hidden and read_only are real (resolved) absolute paths; hidden
    paths inside the workspace are masked after the workspace is bound, the
    others before it, so a hidden ancestor never hides the workspace itself.
    """
    ops, bound = _system_binds(layout, gpu, tmpfs_bytes, features)
    installed = [os.path.join(d, name) for d in layout.package_dirs for name in PACKAGE_NAMES]
    # The run folder and the runs folder: were they ever under a bound path,
    # private/ and the other runs would show; the workspace is bound over them.
    run_folders = [p for p in (os.path.dirname(workspace), os.path.dirname(os.path.dirname(workspace)))
                   if p != "/"]  # masking / would swallow every other mask
    to_mask = sorted({p for p in [*hidden, *installed, *run_folders] if os.path.lexists(p)})
    outside = [p for p in to_mask if not is_within(p, workspace)]
    inside = [p for p in to_mask if is_within(p, workspace) and p != workspace]
    late: list[list[str]] = []
    for path in _outermost(outside):
        if any(is_within(path, root) for root in bound):
            cover, seal = _mask(path)
            ops += cover
            late += seal
    ops.append(["--bind", workspace, workspace])
    for source, target, writable in extra_binds:  # (an external agent's gateway folder)
        ops.append(["--bind" if writable else "--ro-bind", source, target])
    ops += late
    for path in read_only:
        if is_within(path, workspace) and os.path.lexists(path) and not os.path.islink(path):
            ops.append(["--ro-bind", path, path])
    for path in _outermost(inside):
        cover, seal = _mask(path)
        ops += cover + seal
    ops += [["--remount-ro", "/"], ["--chdir", workspace]]
    return BwrapCommand(flags=_flags(network, features), ops=ops)


def _flags(network: bool, features: BwrapFeatures) -> list[str]:
    flags = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--die-with-parent", "--new-session",
             "--hostname", "mlab-sandbox"]
    if not network:
        flags.append("--unshare-net")
    if features.disable_userns:
        flags.append("--disable-userns")
    return flags


def _system_binds(layout: InterpreterLayout, gpu: bool, tmpfs_bytes: int,
                  features: BwrapFeatures) -> tuple[list[list[str]], list[str]]:
    """The operations that make the sandbox's system (read-only system folders and /etc files, /proc,
    /dev, the GPU's nodes, the scratch tmpfs, the interpreter's roots), and the paths they bound."""
    ops: list[list[str]] = []
    bound: list[str] = []

    def bind(option: str, path: str) -> None:
        ops.append([option, path, path])
        bound.append(path)

    for path in SYSTEM_DIRS:
        bind("--ro-bind", path)
    for path in SYSTEM_LINKS:
        if os.path.islink(path):
            ops.append(["--symlink", os.readlink(path), path])
        elif os.path.isdir(path):
            bind("--ro-bind", path)
    for name in ETC_FILES:
        if os.path.exists(f"/etc/{name}"):
            bind("--ro-bind", f"/etc/{name}")
    ops += [["--proc", "/proc"], ["--dev", "/dev"]]
    if gpu:
        for node in gpu_device_nodes():
            ops.append(["--dev-bind", node, node])
        if os.path.isdir("/sys"):
            bind("--ro-bind", "/sys")
    # The scratch tmpfs come before the interpreter, which may live under /tmp.
    for scratch in ("/tmp", "/dev/shm"):
        if features.size:
            ops.append(["--size", str(tmpfs_bytes)])
        ops.append(["--tmpfs", scratch])
    for root in layout.roots:
        if not any(is_within(root, other) for other in bound):
            bind("--ro-bind", root)
    return ops, bound
