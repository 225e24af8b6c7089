"""This project's wheel made again from an installed copy's own files.

`mlab export-task --to harbor` puts mlab's wheel into the verifier's image. From a source checkout
it is built with pip; a copy installed with `pip install .` (or from a wheel) has no sources left to
build from, but its files are all listed in the distribution's RECORD: this module packs them
again, with the metadata pip kept (METADATA, WHEEL, entry_points.txt), into a wheel of the same
name, leaving out what an install adds (byte code, console scripts, RECORD, INSTALLER, REQUESTED,
direct_url.json). The wheel holds exactly the code that is running.
"""
from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from mlab.errors import MlabError
from mlab.installation import DISTRIBUTION, installed_distribution

# dist-info files an installer writes, not part of the wheel it installed
INSTALLER_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
PACKAGES = ("mlab", "mlabc")


class WheelError(MlabError):
    """The installed copy cannot be packed into a wheel."""


def repack_installed(into: Path, dist=None) -> Path:
    """Write the installed distribution (default: the one this mlab runs from) as a wheel in `into`."""
    dist = dist if dist is not None else installed_distribution()
    if dist is None or not dist.files:
        raise WheelError(f"mlab runs neither from a checkout nor from an installed {DISTRIBUTION} with a "
                         "RECORD of its files, so its wheel cannot be made here; give one with --wheel FILE.whl")
    stem = f"{DISTRIBUTION.replace('-', '_')}-{dist.version}"
    tags = [line.split(":", 1)[1].strip() for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")]
    wheel = Path(into) / f"{stem}-{tags[0] if tags else 'py3-none-any'}.whl"
    entries = []
    for file in dist.files:
        parts = Path(str(file)).parts
        if not parts or parts[0] == ".." or "__pycache__" in parts or file.suffix in (".pyc", ".pyo"):
            continue
        in_info = parts[0].endswith(".dist-info")
        if (in_info and parts[-1] in INSTALLER_FILES) or (not in_info and parts[0] not in PACKAGES):
            continue
        entries.append(("/".join(parts), Path(str(dist.locate_file(file)))))
    Path(into).mkdir(parents=True, exist_ok=True)
    info = next((name.split("/")[0] for name, _ in entries if name.split("/")[0].endswith(".dist-info")),
                f"{stem}.dist-info")
    record = []
    try:
        with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, path in sorted(entries):
                data = path.read_bytes()
                archive.writestr(_entry(name), data)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                record.append(f"{name},sha256={digest},{len(data)}")
            record.append(f"{info}/RECORD,,")
            archive.writestr(_entry(f"{info}/RECORD"), "\n".join(record) + "\n")
    except OSError as problem:
        wheel.unlink(missing_ok=True)
        raise WheelError(f"cannot pack the installed {DISTRIBUTION} into {wheel}: "
                         f"{problem.strerror or problem}{f': {problem.filename}' if problem.filename else ''}") from None
    return wheel


def _entry(name: str) -> zipfile.ZipInfo:
    """A member with a fixed date and ordinary file permissions (rw-r--r--), compressed."""
    entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    entry.external_attr = 0o644 << 16
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry
