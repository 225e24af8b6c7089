"""How this mlab was installed, and the command that adds one of its optional extras (the loaders',
Ray's, the Gym environment's packages) for that way of installing, printed where a missing package
is reported."""
from __future__ import annotations

# The distribution's name (pyproject.toml): PyPI's `mlab` is another project, so the commands
# and packages are mlab and mlabc but the distribution is not.
DISTRIBUTION = "mlab-harness"


def install_hint(extra: str) -> str:
    """The command that adds an optional dependency group (pyproject.toml's extras) to this mlab,
    runnable as printed for the way it was installed: a source checkout (an editable install) is
    reinstalled editable with the extra; a copy installed from a checkout folder or a wheel file
    that is still there is reinstalled from it with the extra; otherwise (the distribution is on
    no index) the extra's own packages are named."""
    from pathlib import Path

    kind, where = installed_origin()
    if kind in ("checkout", "folder"):
        shown = "." if Path.cwd().resolve() == where else str(where)
        return f"pip install {'-e ' if kind == 'checkout' else ''}'{shown}[{extra}]'"
    if kind == "wheel":
        return f"pip install '{where}[{extra}]'"
    packages = extra_requirements(extra)
    if not packages:
        return f"install the packages of the `{extra}` extra of {DISTRIBUTION} (its pyproject.toml lists them)"
    return "pip install " + " ".join(f"'{p}'" for p in packages)


def installed_origin():
    """Where this mlab comes from: ("checkout", folder) when it runs from a source checkout (an
    editable install or the folder itself); ("folder", folder) or ("wheel", file) when a copy was
    installed from a checkout folder or a wheel file that still exists, as pip recorded it (PEP
    610's direct_url.json); ("installed", None) otherwise."""
    import json
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    from mlabc.resources import checkout_root

    root = checkout_root()
    if root is not None and (root / "runtime" / "mlab" / "installation.py").resolve() == Path(__file__).resolve():
        return "checkout", root
    dist = installed_distribution()
    try:
        record = json.loads(dist.read_text("direct_url.json") or "{}") if dist is not None else {}
    except ValueError:
        record = {}
    url = urlparse(str(record.get("url", "")))
    path = Path(unquote(url.path)) if url.scheme == "file" else None
    if path is not None and "dir_info" in record and (path / "pyproject.toml").is_file():
        return "folder", path.resolve()
    if path is not None and "archive_info" in record and path.suffix == ".whl" and path.is_file():
        return "wheel", path.resolve()
    return "installed", None


def installed_distribution():
    """The installed distribution this mlab's files belong to (importlib.metadata), else None."""
    from importlib import metadata
    from pathlib import Path

    try:
        dist = metadata.distribution(DISTRIBUTION)
        ours = Path(str(dist.locate_file("mlab/installation.py"))).resolve() == Path(__file__).resolve()
    except (metadata.PackageNotFoundError, OSError):
        return None
    return dist if ours else None


def extra_requirements(extra: str) -> list[str]:
    """The requirements an extra adds, as the installed metadata lists them (markers dropped)."""
    dist = installed_distribution()
    found = []
    for line in (dist.requires or []) if dist is not None else []:
        requirement, _, marker = line.partition(";")
        if marker and f'extra == "{extra}"' in marker.replace("'", '"'):
            found.append(requirement.strip().replace(" ", ""))
    return found
