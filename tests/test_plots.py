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


def _part(label, lo, hi, boundary, verdict, direction="greater", estimate=None, margin=0.0):
    return dict(label=label, estimate=estimate, lo=lo, hi=hi, boundary=boundary, direction=direction,
                verdict=verdict, margin=margin)


def test_standard_position_puts_the_paper_side_right_and_decides_beyond_one():
    assert plots.standard_position(2.0, 1.0, 3.0, 0.5, "greater") == (1.5, 1.5)  # centre 2, half-width 1
    assert plots.standard_position(1.2, 1.0, 3.0, 0.5, "greater") == (1.5, pytest.approx(0.7))  # the estimate's dot
    assert plots.standard_position(None, 1.0, 3.0, 0.5, "less") == (-1.5, -1.5)  # wholly on the other side
    assert plots.standard_position(None, 1.0, 3.0, 0.5, "not above") == (-1.5, -1.5)  # decided as "less"
    z, _ = plots.standard_position(0.4, -0.6, 1.4, 0.5, "greater")
    assert z == pytest.approx(-0.1) and abs(z) < 1, "an interval straddling its boundary is inside the band"
    # equivalence within 0 +- 0.05: the distance to the nearer edge of the margin, positive inside it
    assert plots.standard_position(0.01, 0.0, 0.02, 0.0, "equivalent", margin=0.05) == pytest.approx((4.0, 4.0))
    assert plots.standard_position(None, 0.1, 0.2, 0.0, "equivalent", margin=0.05)[0] == pytest.approx(-2.0)
    assert plots.standard_position(None, -0.1, 0.1, 0.0, "equivalent", margin=0.05)[0] == pytest.approx(0.5)
    # deterministic: at infinity on its side, 0 on the boundary
    assert plots.standard_position(17.0, 17.0, 17.0, 0.5, "less") == (-np.inf, -np.inf)
    assert plots.standard_position(0.3, 0.3, 0.3, 0.5, "less") == (np.inf, np.inf)
    assert plots.standard_position(0.5, 0.5, 0.5, 0.5, "greater") == (0.0, 0.0)
    with pytest.raises(ValueError, match="direction must be one of"):
        plots.standard_position(0.0, -1.0, 1.0, 0.0, "sideways")


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_scoreboard_figure_draws_each_part_by_verdict_and_clips_far_ones():
    parts = [_part("t1", 1.0, 3.0, 0.5, "reproduced", estimate=2.0),
             _part("t2: a", 1.0, 3.0, 0.5, "not reproduced", direction="less"),
             _part("t3", -0.6, 1.4, 0.5, "inconclusive at this budget", estimate=0.4),
             _part("t4: far", 20.0, 22.0, 0.0, "reproduced"),
             _part("t5", 17.0, 17.0, 0.5, "not reproduced", direction="less", estimate=17.0),
             _part("t6: " + "x" * 80, 0.0, 0.02, 0.0, "partly", direction="equivalent", margin=0.05)]
    fig = plots.scoreboard_figure(parts, title="Paper A: Yan & Huang", n_without_interval=3)
    ax = fig.axes[0]
    bars = {line.get_gid(): line for line in ax.lines if line.get_gid()}
    x = {i: bars[f"part {i}"].get_xydata()[:, 0].tolist() for i in range(len(parts))}
    assert x[0] == [0.5, 2.5] and x[1] == [-2.5, -0.5] and x[2] == pytest.approx([-1.1, 0.9])
    assert x[3] == [8.0, 8.0] and x[4] == [-8.0, -8.0], "beyond the axis, and deterministic: at the edge"
    assert x[5] == pytest.approx([3.0, 5.0])
    assert bars["estimate 0"].get_xydata()[0, 0] == 1.5 and bars["estimate 2"].get_xydata()[0, 0] == pytest.approx(-0.1)
    assert [bars[f"part {i}"].get_color() for i in range(6)] == ["#2ca02c", "#d62728", "#7f7f7f", "#2ca02c",
                                                                "#d62728", "#ff7f0e"]
    assert all(bars[f"part {i}"].get_ydata().tolist() == [i, i] for i in range(6)), "one row per part"
    arrows = [line for line in ax.lines if line.get_marker() in (">", "<")]
    assert [(a.get_marker(), a.get_xdata()[0] > 8) for a in arrows] == [(">", True), ("<", False)]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[:5] == ["t1", "t2: a", "t3", "t4: far", "t5"] and len(labels[5]) == 60 and labels[5][-1] == "…"
    assert ax.get_ylim() == (5.5, -0.5), "the first part on top"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["reproduced", "not reproduced", "partly",
                                                                    "inconclusive"]
    assert "3 parts without an interval not drawn" in ax.get_xlabel()
    assert fig.get_suptitle() == "Paper A: Yan & Huang"
    assert _pixels(fig).shape[0] > _pixels(plots.scoreboard_figure(parts[:2])).shape[0], "height grows with parts"
    with pytest.raises(ValueError, match="at least one part"):
        plots.scoreboard_figure([])
    assert plots.verdict_colour("not measurable at this profile") == "#c7c7c7"
    assert plots.verdict_colour("what?") == "#000000"
