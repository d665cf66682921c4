"""invlib.papers.a.protocol: paper A's declared claims, their smallest effects taken from the paper's own numbers,
decided on either side of their boundaries; the reports record exactly the declared claims of each chapter."""

import numpy as np
import pytest
from test_probes import EARLY, _layers_table, _table1

from invlib import results
from invlib.papers.a import probes, probes_reports, tables
from invlib.papers.a.protocol import ITEMS_MIN, PROTOCOL
from invlib.protocol import decide
from invlib.verdicts import NOT_MEASURABLE, NOT_REPRODUCED, REPRODUCED, Interval

P1 = {(f, t): acc[1] for f, tasks in tables.PAPER_TABLE1.items() for t, acc in tasks.items()}
RESNETS, EASY = ("ResNet-18", "ResNet-50"), ("saturation", "contrast", "brightness")


def _around(part, side: float):
    """An effect for ``part`` whose interval lies wholly beyond its boundary (``side`` +1) or wholly short of it
    (-1): an interval of ``n_min`` items, or ``n_min`` replicates for a part on seeds or draws."""
    sign = {"greater": 1, "less": -1, "not below": 1, "not above": -1}[part.direction]
    centre = part.boundary + side * sign * max(part.smallest, 1.0) * 0.5
    if part.unit in ("seed", "draw"):
        return centre + np.array([-1e-3, 0.0, 1e-3] + [0.0] * (part.n_min - 3))
    width = max(part.smallest, 1.0) * 0.1
    return Interval(centre, centre - width, centre + width, part.n_min, part.level(), "bootstrap")


@pytest.mark.parametrize("claim", list(PROTOCOL), ids=lambda c: c.id)
def test_every_claim_is_reproduced_beyond_its_boundary_and_not_short_of_it(claim):
    def effects(side, gate_side=1):  # the gate (a premise) met unless gate_side is -1
        return {name: {"R": _around(p, s)} if p.each else _around(p, s) for name, p in claim.parts.items()
                for s in [gate_side if name in claim.gate else side]}

    for side, verdict in ((1, REPRODUCED), (-1, NOT_REPRODUCED)):
        assert decide(claim, effects(side)).verdict == verdict, (claim.id, side)
        if claim.gate:  # a premise the data do not meet: no verdict on the claim, whatever its comparison shows
            assert decide(claim, effects(side, gate_side=-1)).verdict == "inconclusive at this budget", claim.id
    # one replicate (or pair) short of n_min never decides
    part = next(iter(claim.parts.values()))
    few = Interval(part.boundary + 10, part.boundary + 5, part.boundary + 15, part.n_min - 1, part.level(), "t")
    effects = {name: {"R": few} if p.each else few for name, p in claim.parts.items()}
    assert decide(claim, effects).verdict == "inconclusive at this budget"


def test_every_part_declares_a_smallest_effect_its_unit_and_n_min():
    for c in PROTOCOL:
        assert c.chapter in ("a1_ranking_tasks", "a2_which_layers")
        for name, p in c.parts.items():
            gate = ("less",) if name in c.gate else ()  # a premise: raw pixels stay below a level
            assert p.direction in ("greater", "not below", *gate) and p.smallest > 0 and p.reason, (c.id, name)
            assert name.startswith("premise: ") == (name in c.gate), (c.id, name)
            assert (p.unit, p.n_min) in (("image", ITEMS_MIN), ("draw", 3), ("seed", 3)), (c.id, name)
            assert "our" not in p.reason.split(), (c.id, p.reason)  # from the paper or practice, never our runs


def test_the_sizes_and_the_papers_values_follow_from_the_papers_tables():
    gaps = {base: [P1[r, t] - P1[base, t] for r in RESNETS for t in probes.GEOMETRIC]
            for base in ("DCT", "Passthrough")}
    assert PROTOCOL["table1/resnets_beat_dct"].paper == f"{min(gaps['DCT']):.1f}"
    assert PROTOCOL["table1/resnets_beat_pixels"].paper == f"{min(gaps['Passthrough']):.1f}"
    half = min(min(g) for g in gaps.values()) / 2  # "substantially outperform": half the smallest gap
    for cid, part in (("table1/resnets_beat_dct", ""), ("table1/resnets_beat_pixels", "beat the pixels")):
        assert PROTOCOL[cid].parts[part].smallest == pytest.approx(half) and PROTOCOL[cid].parts[part].null == 0
    assert PROTOCOL["table1/colour_near_100"].paper == f"{min(P1[r, t] for r in RESNETS for t in EASY):.1f}"
    near = PROTOCOL["table1/colour_near_100"].parts[""]
    assert (near.null, near.boundary) == (50.0, 90.0)  # chance, and the claim's 90 %
    contrast = [P1[r, "contrast"] - P1["Passthrough", "contrast"] for r in RESNETS]
    assert PROTOCOL["table1/contrast_far_above_pixels"].paper == f"{min(contrast):.1f}"
    assert PROTOCOL["table1/contrast_far_above_pixels"].parts["far above the pixels"].boundary == 20.0
    harder = [P1[r, "zoom_in"] - P1[r, "zoom_out"] for r in RESNETS]
    assert PROTOCOL["table1/zoom_out_harder"].paper == f"{min(harder):.1f}"
    assert PROTOCOL["table1/zoom_out_harder"].parts["harder"].smallest == pytest.approx(min(harder) / 2, abs=0.1)
    hue = [P1[r, t] - P1[r, "hue"] for r in RESNETS for t in EASY]
    assert PROTOCOL["table1/hue_hardest_colour"].paper == f"{min(hue):.1f}"
    share = np.mean([P1["ResNet-18", t] >= P1["ResNet-50", t] for t in probes.TASKS])
    assert PROTOCOL["table1/resnet18_at_least_resnet50"].paper == f"{share:.3f}"
    assert PROTOCOL["table1/resnet18_at_least_resnet50"].parts[""].boundary == 0.5
    p2 = {h: {t: a[1] for t, a in ts.items()} for h, ts in tables.PAPER_TABLE2.items()}
    for cid, other in (("table2/first_half_beats_second", "second half"), ("table2/first_half_beats_all", "all")):
        claim = PROTOCOL[cid]
        assert claim.names == tuple(p2["all"])
        gaps = {t: p2["first half"][t] - p2[other][t] for t in p2["all"]}
        assert claim.paper == ", ".join(f"{t} {g:.1f}" for t, g in gaps.items())
        # half the smallest drop (4.1 points) or improvement (0.9) Table 2 shows: a faithful run clears it
        assert all(p.boundary == pytest.approx(min(gaps.values()) / 2) for p in claim.parts.values())
        assert {p.direction for p in claim.parts.values()} == {"greater"}
    assert PROTOCOL["table2/first_half_beats_all"].parts["hue"].level() == pytest.approx(1 - 0.05 / 3)


def test_the_pixel_premise_is_what_the_papers_pixels_show():
    """The claims against raw pixels, and zoom-out's, are decided only where the pixels cannot solve the task: below
    the 90 % the book reads as 'near 100 %', as every passthrough accuracy the paper sets a claim against is."""
    gated = {"table1/resnets_beat_pixels": list(probes.GEOMETRIC), "table1/contrast_far_above_pixels": ["contrast"],
             "table1/zoom_out_harder": ["zoom_out"]}
    near = PROTOCOL["table1/colour_near_100"].parts[""].boundary
    for cid, tasks in gated.items():
        (gate,) = PROTOCOL[cid].gate
        part = PROTOCOL[cid].parts[gate]
        assert (part.direction, part.null, part.boundary) == ("less", 100.0, near)
        assert all(P1["Passthrough", t] < near for t in tasks), cid
    assert {c.id for c in PROTOCOL if c.gate} == set(gated)


def test_the_criterion_on_the_page_is_written_from_the_declaration():
    text = PROTOCOL["table1/resnets_beat_dct"].criterion()
    assert "> 6.2 (no effect 0; smallest effect that matters 6.2: 'the ResNet backbones" in text
    assert text.endswith("95 % interval over >= 20 images, for each backbone and geometric task (zoom in, zoom out, "
                         "aspect ratio)")
    some = PROTOCOL["table2/first_half_beats_all"].criterion()
    assert some.startswith("at least one of 3 must hold: zoom_in:") and "98.33 % interval" in some


@pytest.mark.slow
def test_the_reports_record_exactly_each_chapters_declared_claims():
    run = results.Run("demo", "smoke")
    probes_reports.report_table1(run, _table1(), ["ResNet-18", "ResNet-50"])
    assert list(run.claims) == [c.id for c in PROTOCOL.of_chapter("a1_ranking_tasks")]
    for cid, c in run.claims.items():
        assert c["declaration"] == PROTOCOL[cid].to_dict() and c["criterion"] == PROTOCOL[cid].criterion()
        assert c["paper"] == PROTOCOL[cid].paper
    assert run.claims["table1/resnets_beat_dct"]["evidence"]["parts"]["ResNet-50 zoom_out"]["boundary"] == 6.2
    run = results.Run("demo", "smoke")
    probes_reports.report_layers(run, *_layers_table({"ResNet-18": EARLY}))
    assert list(run.claims) == [c.id for c in PROTOCOL.of_chapter("a2_which_layers")]
    # an undefined task: not measurable as a whole, for its stated reason
    run = results.Run("demo", "smoke")
    probes_reports.report_table1(run, _table1({("ResNet-18", "hue"): float("nan")}), ["ResNet-18"])
    assert run.claims["table1/hue_hardest_colour"]["verdict"] == NOT_MEASURABLE
    assert "undefined" in run.claims["table1/hue_hardest_colour"]["evidence"]["reason"]
