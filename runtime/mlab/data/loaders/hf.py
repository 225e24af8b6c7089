"""Hugging Face datasets: download with the `datasets` package (extra `hf`), keep each split as JSON Lines.

Gated datasets need their terms accepted on the dataset's page and a login
(`huggingface-cli login` or $HF_TOKEN) on the machine that prepares the data.
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import DataError, first_line
from mlab.installation import install_hint

INSTALL_HINT = install_hint("hf")


def load_dataset(name: str, cache_dir: Path):
    """The dataset's splits by name (the one place that imports `datasets`)."""
    try:
        import datasets
    except ImportError:
        raise DataError(f"the huggingface source needs the `datasets` package: {INSTALL_HINT}") from None
    return datasets.load_dataset(name, cache_dir=str(cache_dir))


def explain(error: Exception, name: str) -> str:
    """A message a user can act on for a failed dataset download."""
    text = first_line(error)
    kind = type(error).__name__
    if "gated" in text.lower() or "Gated" in kind:
        return (f"the Hugging Face dataset {name!r} is gated: accept its terms at "
                f"https://huggingface.co/datasets/{name} and log in (huggingface-cli login or HF_TOKEN)")
    if "NotFound" in kind or "doesn't exist" in text or "not found" in text.lower():
        return f"Hugging Face has no dataset {name!r} (or it is private): {text}"
    return f"downloading the Hugging Face dataset {name!r} failed (is the network reachable?): {kind}: {text}"


def download(name: str, target: Path, where: str) -> None:
    """Write every split of the dataset as <split>.jsonl into target (text, numbers and labels as they are)."""
    from mlab.data.loaders.files import library_cache

    try:
        splits = load_dataset(name, library_cache("huggingface"))
    except DataError:
        raise
    except Exception as error:  # datasets raises many types (hub, network, loading script)
        raise DataError(f"{explain(error, name)}") from None
    for split_name in splits:
        splits[split_name].to_json(str(target / f"{split_name}.jsonl"))


def convert(folder: Path, variant, public: Path, private: Path, seed: int, where: str) -> None:
    """The dataset's own train/test split (with `split none`), else its train split split as a table."""
    from mlab.data.loaders.files import read_table, write_given_split
    from mlab.data.splits import write_split

    splits = {p.stem: p for p in sorted(folder.glob("*.jsonl"))}
    if not splits:
        raise DataError(f"{where}: the download holds no dataset split")
    if variant.split.method == "none" and {"train", "test"} <= set(splits):
        write_given_split(read_table(splits["train"], where), read_table(splits["test"], where),
                          variant, public, private, where)
        return
    if "train" not in splits and len(splits) != 1:
        raise DataError(f"{where}: the dataset has splits {', '.join(splits)} and none is `train`; declare "
                        f"`prepare \"<task>/make_data.py:function\"` to choose")
    frame = read_table(splits.get("train") or next(iter(splits.values())), where)
    id_column = variant.id
    if id_column and id_column not in frame.columns:
        frame.insert(0, id_column, range(len(frame)))
    write_split(frame, variant, public, private, where)
