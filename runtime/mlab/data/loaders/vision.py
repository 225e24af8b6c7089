"""torchvision image classification sets (extra `vision`): download, keep as arrays, write .npz files.

The download keeps, per part, `<part>_images.npy` (N, H, W[, C] uint8) and `<part>_labels.npy`
(N,) int64, so that conversion needs numpy only. The conversion writes public[0] = train .npz
(`images`, `labels`), public[1] = test .npz (`images`, `ids`) and private[0] = the test ids
and labels, the layout the cifar10 task's lite generator writes too.
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import DataError, first_line
from mlab.installation import install_hint

INSTALL_HINT = install_hint("vision")
PARTS = (("train", True), ("test", False))


def load_torchvision(name: str, root: Path, train: bool):
    """One part of a torchvision dataset, downloaded into root (the one place importing torchvision)."""
    try:
        import torchvision.datasets
    except ImportError:
        raise DataError(f"the torchvision source needs the `torchvision` package: {INSTALL_HINT}") from None
    dataset_class = getattr(torchvision.datasets, name, None)
    if dataset_class is None or not isinstance(dataset_class, type):
        raise DataError(f"torchvision has no dataset {name!r} (e.g. CIFAR10, CIFAR100, MNIST, FashionMNIST)")
    return dataset_class(root=str(root), train=train, download=True)


def _arrays(dataset, name: str, where: str):
    import numpy as np

    images, labels = getattr(dataset, "data", None), getattr(dataset, "targets", None)
    if images is None or labels is None:
        raise DataError(f"torchvision's {name} has no `data` and `targets` arrays; declare "
                        f"`prepare \"<task>/make_data.py:function\"` to convert it")
    images = np.asarray(images.numpy() if hasattr(images, "numpy") else images)
    labels = np.asarray(labels.numpy() if hasattr(labels, "numpy") else labels).astype(np.int64)
    if images.dtype != np.uint8 or len(images) != len(labels):
        raise DataError(f"torchvision's {name} gave {images.dtype} images and {len(labels)} labels for "
                        f"{len(images)} images; expected uint8 images with one label each")
    return images, labels


def download(name: str, target: Path, where: str) -> None:
    """Download both parts and keep them as .npy arrays in target."""
    import numpy as np

    from mlab.data.loaders.files import library_cache

    for part, train in PARTS:
        try:
            dataset = load_torchvision(name, library_cache("torchvision"), train)
        except DataError:
            raise
        except Exception as error:  # network, checksum or archive errors from torchvision
            reason = first_line(error)
            raise DataError(f"downloading torchvision's {name} failed (is the network reachable?): "
                            f"{reason}") from None
        images, labels = _arrays(dataset, name, where)
        np.save(target / f"{part}_images.npy", images, allow_pickle=False)
        np.save(target / f"{part}_labels.npy", labels, allow_pickle=False)


def convert(folder: Path, variant, public: Path, private: Path, seed: int, where: str) -> None:
    """train .npz (images, labels), test .npz (images, ids), answers (id, label) of the test images."""
    import numpy as np
    import pandas as pd

    from mlab.data.loaders.files import require_files

    names = require_files(variant, (".npz", ".npz"), 2,
                          "a train .npz (images, labels) and a test .npz (images, ids)", where)
    arrays = {}
    for part, _ in PARTS:
        try:
            arrays[part] = (np.load(folder / f"{part}_images.npy"), np.load(folder / f"{part}_labels.npy"))
        except (OSError, ValueError) as error:
            raise DataError(f"{where}: the download lacks the {part} arrays ({error})") from None
    train_images, train_labels = arrays["train"]
    test_images, test_labels = arrays["test"]
    test_ids = np.arange(len(test_labels), dtype=np.int64)
    public.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(public / names[0], images=train_images, labels=train_labels)
    np.savez_compressed(public / names[1], images=test_images, ids=test_ids)
    answers = pd.DataFrame({variant.id: test_ids, variant.answers[0]: test_labels})
    answers.to_csv(private / variant.private[0], index=False)
