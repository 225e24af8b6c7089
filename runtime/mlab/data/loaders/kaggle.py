"""Kaggle competitions: download a competition's files with the `kaggle` package (extra `kaggle`).

Credentials come from where the Kaggle client looks: $KAGGLE_USERNAME and $KAGGLE_KEY, or
kaggle.json in $KAGGLE_CONFIG_DIR or ~/.kaggle. A competition's files can be downloaded only
by an account that has accepted its rules on the website; Kaggle answers 403 otherwise, and
the message says where to accept them.
"""
from __future__ import annotations

import importlib.util
import os
import zipfile
from pathlib import Path

from mlab.errors import DataError, first_line
from mlab.installation import install_hint

INSTALL_HINT = install_hint("kaggle")


def credentials_problem() -> str | None:
    """Why the Kaggle client would find no credentials, or None when it will."""
    if os.environ.get("KAGGLE_USERNAME") and os.environ.get("KAGGLE_KEY"):
        return None
    folder = Path(os.environ.get("KAGGLE_CONFIG_DIR") or Path.home() / ".kaggle").expanduser()
    if (folder / "kaggle.json").is_file():
        return None
    return (f"no Kaggle credentials: create an API token on kaggle.com (Settings, API, Create New Token) "
            f"and save it as {folder / 'kaggle.json'}, or set KAGGLE_USERNAME and KAGGLE_KEY")


def kaggle_api():
    """An authenticated Kaggle API client (the one place that imports `kaggle`)."""
    if importlib.util.find_spec("kaggle") is None:
        raise DataError(f"the kaggle source needs the `kaggle` package: {INSTALL_HINT}")
    problem = credentials_problem()
    if problem:  # checked first: old clients fail while being imported when there are none
        raise DataError(problem)
    try:
        from kaggle.api.kaggle_api_extended import KaggleApi
    except ImportError:
        raise DataError(f"the kaggle source needs the `kaggle` package: {INSTALL_HINT}") from None
    except Exception as error:  # old clients authenticate while being imported
        raise DataError(f"the Kaggle client could not start: {type(error).__name__}: {error}") from None
    api = KaggleApi()
    try:
        api.authenticate()
    except Exception as error:
        raise DataError(f"Kaggle refused the credentials: {error}") from None
    return api


def http_status(error: Exception) -> int | None:
    """The HTTP status inside a client error, whichever client version raised it."""
    for candidate in (getattr(error, "status", None), getattr(getattr(error, "response", None), "status_code", None)):
        if isinstance(candidate, int):
            return candidate
    return None


def explain(error: Exception, competition: str) -> str:
    """A message a user can act on for a failed competition download."""
    status = http_status(error)
    page = f"https://www.kaggle.com/competitions/{competition}"
    if status == 403:
        return (f"Kaggle refused the download of {competition!r} (403): this account has not accepted the "
                f"competition's rules. Open {page}/rules, accept them, and prepare again")
    if status == 401:
        return "Kaggle refused the credentials (401): check the username and key in kaggle.json"
    if status == 404:
        return f"Kaggle has no competition {competition!r} (404); check the name in the task's `from kaggle`"
    reason = first_line(error)
    return f"downloading the Kaggle competition {competition!r} failed (is the network reachable?): {reason}"


def download(competition: str, target: Path, where: str) -> None:
    """Download and unpack a competition's files into target."""
    api = kaggle_api()
    try:
        api.competition_download_files(competition, path=str(target), quiet=True)
    except DataError:
        raise
    except Exception as error:  # the client raises its own and the HTTP library's types
        raise DataError(f"{explain(error, competition)}") from None
    unpack_archives(target, where)


def unpack_archives(folder: Path, where: str) -> None:
    """Replace every .zip in folder by its contents (Kaggle serves competitions zipped)."""
    for archive in sorted(folder.rglob("*.zip")):
        try:
            with zipfile.ZipFile(archive) as bundle:
                root = archive.parent.resolve()
                for member in bundle.namelist():
                    if not (root / member).resolve().is_relative_to(root):
                        raise DataError(f"{archive.name} holds a path outside its folder: {member}")
                bundle.extractall(archive.parent)
        except zipfile.BadZipFile as error:
            raise DataError(f"the downloaded {archive.name} is not a valid zip file ({error})") from None
        archive.unlink()


def convert(folder: Path, variant, public: Path, private: Path, seed: int, where: str) -> None:
    """The competition's table, split as a bundled table is (mlab.data.splits.write_split)."""
    from mlab.data.loaders.files import find_table
    from mlab.data.splits import write_split

    frame = find_table(folder, where)
    id_column = variant.id
    if id_column and id_column not in frame.columns:
        frame.insert(0, id_column, range(len(frame)))
    write_split(frame, variant, public, private, where)
