"""Data for the fathomnet task: generated (lite) or converted from Kaggle (full).

Both variants end in the same files, written by `write_split`:

public/  train_images.npy   uint8 (N, S, S, 3) RGB images, row i <-> row i of train.csv
         train.csv          id, categories (category ids present, space-separated)
         test_images.npy    uint8 (M, S, S, 3)
         test.csv           id
         category_key.csv   id, name, supercategory
private/ answers.csv        id, categories, osd (1 = image from outside the training distribution)

Lite: 32x32 pictures of a generated seafloor. Each of 20 "species" is a shape drawn in a
colour; how often a species occurs depends on the depth of the picture, and the water gets
darker with depth. Training pictures come from 0-800 m. The test set mixes pictures from
the same range (osd 0) with pictures from 800-1300 m (osd 1), where five species live that
never appear in training.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

IMAGE_SIZE = 32
N_IN_SAMPLE = 1050          # 0-800 m; a seventh of them go to test
N_OUT_OF_SAMPLE = 150       # 800-1300 m; all go to test
IN_SAMPLE_TEST = 150
SHALLOW_LIMIT = 800.0
DEEPEST = 1300.0

COLOURS = {"orange": (235, 125, 45), "pink": (225, 95, 170), "yellow": (235, 215, 70),
           "white": (230, 230, 225), "red": (200, 40, 40)}
# id, name, supercategory, shape, colour, preferred depth in metres (deep-only from 16 on)
CATEGORIES = (
    (1, "Asteroidea orange", "Sea star", "cross", "orange", 150),
    (2, "Asteroidea red", "Sea star", "cross", "red", 450),
    (3, "Actiniaria pink", "Anemone", "disc", "pink", 100),
    (4, "Actiniaria white", "Anemone", "disc", "white", 350),
    (5, "Echinoidea red", "Urchin", "ring", "red", 250),
    (6, "Echinoidea yellow", "Urchin", "ring", "yellow", 600),
    (7, "Holothuroidea orange", "Sea cucumber", "bar", "orange", 500),
    (8, "Holothuroidea pink", "Sea cucumber", "bar", "pink", 700),
    (9, "Porifera yellow", "Sponge", "square", "yellow", 200),
    (10, "Porifera white", "Sponge", "square", "white", 550),
    (11, "Pennatulacea orange", "Sea pen", "triangle", "orange", 300),
    (12, "Pennatulacea yellow", "Sea pen", "triangle", "yellow", 650),
    (13, "Crinoidea pink", "Feather star", "cross", "pink", 400),
    (14, "Gastropoda white", "Snail", "ring", "white", 750),
    (15, "Galatheoidea red", "Squat lobster", "square", "red", 600),
    (16, "Hexactinellida white", "Glass sponge", "triangle", "white", 1000),
    (17, "Ophiuroidea yellow", "Brittle star", "cross", "yellow", 1100),
    (18, "Munidopsis orange", "Squat lobster", "ring", "orange", 950),
    (19, "Psolidae red", "Sea cucumber", "disc", "red", 1200),
    (20, "Antipatharia pink", "Black coral", "square", "pink", 1050),
)


def _shape_mask(shape: str, dy: np.ndarray, dx: np.ndarray, size: float) -> np.ndarray:
    """Which pixels a shape of the given half-size covers, at offsets (dy, dx) from its centre."""
    if shape == "disc":
        return dy ** 2 + dx ** 2 <= size ** 2
    if shape == "ring":
        r2 = dy ** 2 + dx ** 2
        return (r2 <= size ** 2) & (r2 >= (0.55 * size) ** 2)
    if shape == "square":
        return (np.abs(dy) <= 0.8 * size) & (np.abs(dx) <= 0.8 * size)
    if shape == "triangle":
        return (dy <= 0.8 * size) & (dy >= -size + 2 * np.abs(dx))
    if shape == "cross":
        arm = 0.3 * size
        return (((np.abs(dy) <= arm) & (np.abs(dx) <= size))
                | ((np.abs(dx) <= arm) & (np.abs(dy) <= size)))
    if shape == "bar":
        return (np.abs(dy) <= 0.3 * size) & (np.abs(dx) <= 1.2 * size)
    raise ValueError(shape)


def _category_weights(depth: float) -> np.ndarray:
    preferred = np.array([c[5] for c in CATEGORIES], dtype=float)
    weights = np.exp(-((depth - preferred) ** 2) / (2 * 250.0 ** 2))
    deep_only = preferred > SHALLOW_LIMIT
    if depth <= SHALLOW_LIMIT:
        weights[deep_only] = 0.0
    else:
        weights[deep_only] *= 2.5      # the deep fauna dominates down there
    return weights / weights.sum()


def _render(depth: float, rng: np.random.Generator) -> tuple[np.ndarray, list[int]]:
    """One picture at the given depth and the ids of the species it shows."""
    y, x = np.mgrid[0:IMAGE_SIZE, 0:IMAGE_SIZE].astype(float)
    # lamps and camera settings vary a lot from dive to dive; depth only dims the water a little
    light = float(np.clip(1.0 - 0.3 * depth / DEEPEST + rng.normal(scale=0.15), 0.35, 1.2))
    water = np.array([15.0, 55 + 95 * light, 80 + 120 * light])
    vertical = 1.0 + 0.25 * light * (1 - y / IMAGE_SIZE)         # light from above
    image = water[None, None, :] * vertical[:, :, None]
    image += rng.normal(scale=6.0, size=(3,))                     # camera colour cast
    present: list[int] = []
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
        index = rng.choice(len(CATEGORIES), p=_category_weights(depth))
        category_id, _, _, shape, colour, _ = CATEGORIES[index]
        size = rng.uniform(3.0, 7.0)
        centre = rng.uniform(size * 0.7, IMAGE_SIZE - size * 0.7, size=2)
        mask = _shape_mask(shape, y - centre[0], x - centre[1], size)
        tint = np.clip(np.array(COLOURS[colour]) * (0.55 + 0.45 * light)
                       + rng.normal(scale=12.0, size=3), 0, 255)
        image[mask] = 0.15 * image[mask] + 0.85 * tint
        present.append(category_id)
    snow = rng.random((IMAGE_SIZE, IMAGE_SIZE)) < 0.01              # marine snow
    image[snow] += 60
    image += rng.normal(scale=9.0, size=image.shape)
    return np.clip(image, 0, 255).astype(np.uint8), sorted(set(present))


def _image_ids(rng: np.random.Generator, count: int) -> list[str]:
    hexes = ["".join(rng.choice(list("0123456789abcdef"), size=32)) for _ in range(count)]
    return [f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}" for h in hexes]


def category_key() -> pd.DataFrame:
    return pd.DataFrame([c[:3] for c in CATEGORIES], columns=["id", "name", "supercategory"])


def generate_pool(seed: int) -> dict:
    """Generated pictures with their ids, species lists and out-of-sample flags."""
    rng = np.random.default_rng(seed)
    depths = np.concatenate([rng.uniform(0, SHALLOW_LIMIT, N_IN_SAMPLE),
                             rng.uniform(SHALLOW_LIMIT, DEEPEST, N_OUT_OF_SAMPLE)])
    rendered = [_render(d, rng) for d in depths]
    return {"ids": _image_ids(rng, len(depths)),
            "images": np.stack([r[0] for r in rendered]),
            "categories": [r[1] for r in rendered],
            "out_of_sample": depths > SHALLOW_LIMIT,
            "category_key": category_key()}


def write_split(pool: dict, public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int,
                in_sample_test: int) -> None:
    """Out-of-sample pictures and `in_sample_test` random others go to test; write the files."""
    rng = np.random.default_rng(seed + 1)
    out_of_sample = np.asarray(pool["out_of_sample"], dtype=bool)
    in_sample = np.flatnonzero(~out_of_sample)
    test = np.zeros(len(out_of_sample), dtype=bool)
    test[rng.choice(in_sample, size=in_sample_test, replace=False)] = True
    test |= out_of_sample
    order = rng.permutation(len(test))              # mix osd 0 and 1 in the test order
    train_rows, test_rows = order[~test[order]], order[test[order]]

    ids = np.asarray(pool["ids"])
    labels = np.array([" ".join(str(c) for c in cats) for cats in pool["categories"]], dtype=object)
    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    np.save(public_dir / "train_images.npy", pool["images"][train_rows])
    np.save(public_dir / "test_images.npy", pool["images"][test_rows])
    pd.DataFrame({"id": ids[train_rows], "categories": labels[train_rows]}).to_csv(
        public_dir / "train.csv", index=False)
    pd.DataFrame({"id": ids[test_rows]}).to_csv(public_dir / "test.csv", index=False)
    pool["category_key"].to_csv(public_dir / "category_key.csv", index=False)
    pd.DataFrame({"id": ids[test_rows], "categories": labels[test_rows],
                  "osd": out_of_sample[test_rows].astype(int)}).to_csv(private_dir / "answers.csv", index=False)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Lite variant: generate the pictures and write the split files."""
    write_split(generate_pool(seed), pathlib.Path(public_dir), pathlib.Path(private_dir), seed,
                IN_SAMPLE_TEST)


def fetch_images(raw_dir: pathlib.Path, wanted: set[str], opener=None) -> None:
    """Download the training images the Kaggle archive does not hold.

    The competition ships annotations only: object_detection/train.json lists every image with
    its file name and `coco_url`. Each wanted image missing from raw_dir/images/ is fetched from
    there (once; later preparations find it on disk).
    """
    import json
    import urllib.request

    folder = raw_dir / "images"
    missing = {i for i in wanted if not (folder / f"{i}.png").is_file()}
    if not missing:
        return
    listing = raw_dir / "object_detection" / "train.json"
    if not listing.is_file():
        raise FileNotFoundError(f"{len(missing)} training images are missing from {folder} and "
                                f"{listing} (which lists their addresses) is not there either")
    urls = {pathlib.Path(entry["file_name"]).stem: entry["coco_url"]
            for entry in json.loads(listing.read_text(encoding="utf-8"))["images"]}
    unknown = sorted(missing - set(urls))
    if unknown:
        raise ValueError(f"{len(unknown)} images of train.csv are not listed in {listing}, e.g. {unknown[0]}")
    folder.mkdir(parents=True, exist_ok=True)
    opener = opener or urllib.request.urlopen
    for image_id in sorted(missing):
        try:
            with opener(urls[image_id], timeout=60) as response:
                data = response.read()
        except OSError as error:
            raise OSError(f"cannot download image {image_id} from {urls[image_id]}: {error}") from None
        temp = folder / f".{image_id}.part"
        temp.write_bytes(data)
        temp.replace(folder / f"{image_id}.png")


def prepare_kaggle(raw_dir: pathlib.Path, public_dir: pathlib.Path, private_dir: pathlib.Path,
                   seed: int, image_size: int = 128) -> None:
    """Full variant, from the competition's multilabel_classification/train.csv, category_key.csv
    and the training images fetched by its download script into raw_dir/images/<id>.png.

    The competition's evaluation answers are not public, so out-of-sample test pictures are
    made from the training set: a tenth of the categories is held out, and every picture
    showing one of them is an out-of-sample test picture (osd 1); a tenth of the remaining
    pictures are in-sample test pictures (osd 0). Pictures are resized to image_size squared.
    """
    from PIL import Image  # only the full variant reads image files

    raw_dir = pathlib.Path(raw_dir)
    table = pd.read_csv(raw_dir / "multilabel_classification" / "train.csv")
    fetch_images(raw_dir, set(table["id"].astype(str)))
    categories = [sorted({int(float(c)) for c in text.strip("[]").split(",") if c.strip()})
                  for text in table["categories"]]
    key = pd.read_csv(raw_dir / "category_key.csv")
    rng = np.random.default_rng(seed)
    used = sorted({c for cats in categories for c in cats})
    held_out = set(rng.choice(used, size=max(1, len(used) // 10), replace=False).tolist())
    images = np.stack([
        np.asarray(Image.open(raw_dir / "images" / f"{image_id}.png").convert("RGB")
                   .resize((image_size, image_size)), dtype=np.uint8)
        for image_id in table["id"]])
    out_of_sample = np.array([bool(held_out & set(cats)) for cats in categories])
    pool = {"ids": table["id"].tolist(), "images": images, "categories": categories,
            "out_of_sample": out_of_sample, "category_key": key}
    write_split(pool, pathlib.Path(public_dir), pathlib.Path(private_dir), seed,
                in_sample_test=int(0.1 * (~out_of_sample).sum()))
