"""invlib.plots: the figures are drawn from the data they are given."""

import matplotlib
import numpy as np
import pytest
import torch

from invlib import plots, transforms

matplotlib.use("Agg")


def _pixels(fig) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3]


def test_image_grid_draws_titles_and_boxes():
    images = torch.zeros(3, 1, 28, 28, dtype=torch.uint8)
    boxes = torch.tensor([[4.0, 4.0, 20.0, 24.0]] * 3)
    fig = plots.image_grid(images, titles=["a", "b", "c"], boxes=boxes, ncols=2)
    assert len(fig.axes) == 3 and fig.axes[1].get_title() == "b"
    assert len(fig.axes[0].patches) == 1 and fig.axes[0].patches[0].get_width() == 16
    red = _pixels(fig)
    assert ((red[..., 0] > 200) & (red[..., 1] < 80)).any(), "the boxes are drawn in red"
    with pytest.raises(ValueError, match="2 titles for 3 images"):
        plots.image_grid(images, titles=["a", "b"])
    with pytest.raises(ValueError, match=r"boxes must be \(3, 4\)"):
        plots.image_grid(images, boxes=torch.zeros(3, 2))


def test_mosaic_rows_labels_titles_ragged_rows_and_overlay():
    rot = torch.rand(3, 3, 8, 8)
    calls = []
    fig = plots.mosaic({"rotate": rot, "grey": [torch.full((1, 12, 12), 255, dtype=torch.uint8)]},
                       col_titles=["original", "1"], overlay=lambda ax, label, j: calls.append((label, j)))
    assert len(fig.axes) == 4  # 3 + 1: the short row's empty cells are removed
    assert [ax.get_ylabel() for ax in fig.axes] == ["rotate", "", "", "grey"]
    assert [ax.get_title() for ax in fig.axes[:3]] == ["original", "1", ""]
    np.testing.assert_allclose(fig.axes[1].images[0].get_array(), rot[1].permute(1, 2, 0).numpy(), atol=1e-6)
    grey = fig.axes[3].images[0]
    assert grey.get_array().shape == (12, 12) and grey.get_array().max() == 1.0  # uint8 in [0, 1], on a fixed scale
    assert grey.get_clim() == (0, 1)
    assert calls == [("rotate", 0), ("rotate", 1), ("rotate", 2), ("grey", 0)]
    with pytest.raises(ValueError, match="3 column titles for 1 columns"):
        plots.mosaic({"a": torch.rand(1, 3, 4, 4)}, col_titles=["x", "y", "z"])
    with pytest.raises(ValueError, match=r"row 'a', column 0: .*\(C, H, W\) with C 1 or 3"):
        plots.mosaic({"a": torch.rand(1, 2, 4, 4)})
    with pytest.raises(ValueError, match="at least one row"):
        plots.mosaic({})


def test_magnitude_grid_shows_each_op_from_identity_to_far_end():
    image = torch.rand(3, 16, 16)
    fig = plots.magnitude_grid(image, ["brightness", "rotate"], n_levels=5)
    ax = fig.axes[0]
    mosaic = ax.images[0].get_array()
    assert mosaic.shape[:2] == (2 * 16, 5 * 16)
    np.testing.assert_allclose(mosaic[:16, :16], image.permute(1, 2, 0).numpy(), atol=1e-6)  # level 0 = identity
    far = transforms.apply("brightness", image[None], transforms.levels("brightness", 5)[-1:]).clamp(0, 1)[0]
    np.testing.assert_allclose(mosaic[:16, 64:80], far.permute(1, 2, 0).numpy(), atol=1e-6)
    assert [t.get_text().splitlines()[0] for t in ax.get_yticklabels()] == ["brightness", "rotate"]
    with pytest.raises(ValueError, match=r"\(C, H, W\)"):
        plots.magnitude_grid(torch.rand(1, 3, 8, 8))


def test_heatmap_writes_values_and_checks_shape():
    fig = plots.heatmap(np.array([[1.0, 0.5], [0.5, np.nan]]), ["x", "y"], fmt=".1f")
    texts = sorted(t.get_text() for t in fig.axes[0].texts)
    assert texts == ["0.5", "0.5", "1.0"]
    with pytest.raises(ValueError, match=r"must be \(3, 3\) for 3 row and 3 column labels"):
        plots.heatmap(np.eye(2), ["a", "b", "c"])
