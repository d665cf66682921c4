"""Every chapter that takes a folder of the reader's images (``dataset="folder"``, ``root=...``), run at smoke
through the book's runner on a generated folder of greyscale images, then the site built with ``-W``: a new
user's folder without colour must not break a chapter, nor the prose's numbers (a number a chapter cannot measure
on such images is glued as text that says why), nor the site."""

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from invlib import book

ROOT = Path(__file__).resolve().parent.parent
CLASSES = ("disc", "bar", "block")


def folder_chapters(root: Path = ROOT) -> list[str]:
    """The chapters whose parameters cell declares ``root``: those that read a folder of one's own."""
    return [n for n in book.toc_notebooks(root) if "root" in book.notebook_parameters(book.read_notebook(n, root))]


def write_grey_folder(root: Path, per_class: int = 30, seed: int = 0) -> Path:
    """``root/<class>/<image>``: greyscale JPEGs and PNGs (mode ``L``) of mixed, non-square sizes (40-96 px), one
    bright object per class (a disc, a bar, a block) at a random place and size on a dark, noisy background."""
    from PIL import Image

    gen = np.random.default_rng(seed)
    for name in CLASSES:
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            w, h = (int(v) for v in gen.integers(40, 97, 2))
            img = gen.normal(40, 12, (h, w))
            s = int(gen.integers(min(w, h) // 4, min(w, h) // 2))
            x, y = int(gen.integers(0, w - s)), int(gen.integers(0, h - s))
            yy, xx = np.mgrid[:h, :w]
            shape = {"disc": (xx - x - s / 2) ** 2 + (yy - y - s / 2) ** 2 < (s / 2) ** 2,
                     "bar": (xx >= x) & (xx < x + s) & (yy >= y + s // 3) & (yy < y + s - s // 3),
                     "block": (xx >= x) & (xx < x + s) & (yy >= y) & (yy < y + s)}[name]
            img[shape] = gen.uniform(150, 250)
            grey = Image.fromarray(img.clip(0, 255).astype(np.uint8), "L")
            grey.save(root / name / f"{name}_{i:02d}.{'png' if i % 3 == 0 else 'jpg'}")
    return root


def test_the_folder_chapters_are_found_by_their_parameters():
    assert set(folder_chapters()) >= {"00_data_and_transforms", "a1_ranking_tasks", "a2_which_layers",
                                 "b1_rrc_decomposition", "b2_scale_distribution", "b3_invariance_vs_magnitude",
                                 "b4_factors_of_variation", "b5_wordnet", "b6_augerino_real_data",
                                 "c1_invariance_equivariance", "c2_representation_distance",
                                 "c3_equivariance_finetuning", "e4_image_recognition"}


@pytest.mark.slow
def test_every_folder_chapter_runs_on_greyscale_images_and_the_site_builds(tmp_path, copy_book, monkeypatch):
    from PIL import Image

    # results of its own: the session's results folder holds the smoke book's, which other tests read
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))

    folder = write_grey_folder(tmp_path / "grey")
    assert {Image.open(p).mode for p in folder.rglob("*.*")} == {"L"}
    site = copy_book(tmp_path / "book")
    names = folder_chapters(site)
    lines = []
    chapters = book.build("smoke", only=names, params={"dataset": "folder", "root": str(folder)}, root=site,
                          progress=False, echo=lambda *a, **k: lines.append(" ".join(map(str, a))),
                          jobs=book.default_jobs("smoke"))
    status = {c.name: c.status for c in chapters if c.name in names}
    assert status == dict.fromkeys(names, "ok"), "\n".join(lines[-20:])
    for name in names:
        nb = nbformat.read(site / book.GENERATED / f"{name}.ipynb", as_version=4)
        assert nb.metadata["invlib"]["parameters"]["root"] == str(folder), name
        assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"], name
    log = (site / "_build/jupyter-book.log").read_text()  # build_site raised had -W failed
    assert "WARNING" not in log and "build succeeded" in log
    a2 = (site / "_build/html" / book.GENERATED / "a2_which_layers.html").read_text()
    assert re.search(r"the mean depth \(backbones averaged\) is\s+not measured \((saturation and hue|hue and "
                     r"saturation) are undefined on these images\) for the colour tasks against \d\.\d\d for the "
                     r"geometric ones", a2), "A2 says why the colour tasks' depth is missing"
