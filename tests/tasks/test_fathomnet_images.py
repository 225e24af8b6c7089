"""fathomnet's full variant fetches the training images its Kaggle archive does not hold."""
import importlib.util
import io
import json
from pathlib import Path

import pytest

from mlabc.resources import tasks_dir


def load_make_data():
    spec = importlib.util.spec_from_file_location("fathomnet_make_data", tasks_dir() / "fathomnet" / "make_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def write_listing(raw: Path, ids: list[str]) -> None:
    (raw / "object_detection").mkdir(parents=True)
    images = [{"id": n, "file_name": f"{i}.png", "coco_url": f"https://example.test/{i}.png"}
              for n, i in enumerate(ids)]
    (raw / "object_detection" / "train.json").write_text(json.dumps({"images": images}))


def test_missing_images_are_fetched_once_from_their_listed_addresses(tmp_path):
    make_data = load_make_data()
    write_listing(tmp_path, ["a", "b"])
    asked = []

    def opener(url, timeout):
        asked.append(url)
        return FakeResponse(f"PNG of {url}".encode())

    make_data.fetch_images(tmp_path, {"a", "b"}, opener=opener)
    assert sorted(asked) == ["https://example.test/a.png", "https://example.test/b.png"]
    assert (tmp_path / "images" / "a.png").read_bytes() == b"PNG of https://example.test/a.png"
    make_data.fetch_images(tmp_path, {"a", "b"}, opener=opener)  # already on disk: nothing fetched
    assert len(asked) == 2


def test_an_image_without_an_address_or_a_failed_download_is_a_clear_error(tmp_path):
    make_data = load_make_data()
    write_listing(tmp_path, ["a"])
    with pytest.raises(ValueError, match="not listed"):
        make_data.fetch_images(tmp_path, {"a", "zzz"}, opener=lambda url, timeout: FakeResponse(b""))

    def offline(url, timeout):
        raise OSError("network is unreachable")

    with pytest.raises(OSError, match="cannot download image a from https://example.test/a.png"):
        make_data.fetch_images(tmp_path, {"a"}, opener=offline)
    assert not (tmp_path / "images" / "a.png").exists()
