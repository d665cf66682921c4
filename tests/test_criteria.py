"""Paper D's shared parts (the top of invlib.papers.d.protocol): the same statement of the paper is judged with the
same smallest effect, for the same reason, in every chapter that tests it; and invlib.papers.d.criteria's one
difference of differences of every data control."""

import inspect

import numpy as np
import pytest

from invlib.papers.d import contrastive_reports, criteria, cropping_reports, fixed_reports
from invlib.papers.d import protocol as P
from invlib.protocol import Claim, decide

SHARED = {"input_dependent": ("d2_instance_crops", "d4_contrastive_crops", "d5_fixed_classifier_tta"),
          "size_follows_object": ("d2_instance_crops", "d4_contrastive_crops"),
          "entropy_in_band": ("d2_instance_crops", "d4_contrastive_crops"),
          "on_object": ("d2_instance_crops", "d4_contrastive_crops"),
          "gain_shrinks": ("d2_instance_crops", "d3_colour_jitter", "d4_contrastive_crops", "d5_fixed_classifier_tta")}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_each_shared_part_has_a_smallest_effect_and_a_reason(name):
    part = getattr(P, name)()
    assert part.smallest > 0 and part.null == 0 and part.direction == "greater" and part.unit == "seed"
    assert len(part.reason) > 20 and part.boundary == part.smallest
    named = getattr(P, name)("a chapter's own wording of the quantity")
    assert named.quantity != part.quantity and (named.smallest, named.reason) == (part.smallest, part.reason)


@pytest.mark.parametrize("name", sorted(SHARED))
def test_every_chapter_that_tests_the_statement_declares_the_shared_part(name):
    shared = getattr(P, name)()
    users = [(c.chapter, c.id, p) for c in P.PROTOCOL for p in c.parts.values() if p.reason == shared.reason]
    missing = set(SHARED[name]) - {chapter for chapter, _, _ in users}
    assert not missing, f"{sorted(missing)} judge this statement with a part of their own"
    for chapter, cid, p in users:  # the same size; D2 measures the crops on the object in points, not shares
        points = name == "on_object" and "points" in p.quantity and p.smallest == 100 * shared.smallest
        assert p.smallest == shared.smallest or points, (chapter, cid, p.smallest)
        assert (p.null, p.direction) == (shared.null, shared.direction), (chapter, cid)  # its unit: the chapter's


@pytest.mark.parametrize("name", sorted(SHARED))
def test_a_shared_part_decides_on_both_sides_of_its_boundary(name):
    part = getattr(P, name)()
    claim = Claim("x/shared", "d2_instance_crops", "A statement.", "the paper's", "Sec. 5", part)
    b = part.boundary
    assert decide(claim, [1.5 * b, 1.55 * b, 1.6 * b]).verdict == "reproduced"
    assert decide(claim, [0.4 * b, 0.45 * b, 0.5 * b]).verdict == "not reproduced"  # an effect, but below it
    assert decide(claim, [1.5 * b]).verdict == "inconclusive at this budget"  # one seed


def test_gain_shrink_is_the_one_difference_of_differences_of_every_data_control():
    import pandas as pd

    from invlib.papers.d import colour_reports

    ia, free = pd.Series([0.61, 0.62, 0.60], index=[0, 1, 2]), pd.Series([0.55, 0.56, 0.57], index=[0, 1, 2])
    ia0, free0 = pd.Series([0.50, 0.52], index=[0, 2]), pd.Series([0.50, 0.51], index=[0, 2])
    gain, still, shrink = criteria.gain_shrink(ia, free, ia0, free0)
    assert np.allclose(gain, [6.0, 6.0, 3.0]) and 1 not in still.index and np.isnan(shrink[1])  # seed 1: no control
    assert np.allclose(shrink.dropna(), [6.0, 2.0])
    assert shrink[2] == (ia[2] - free[2]) * 100 - (ia0[2] - free0[2]) * 100  # bit for bit: points, then the difference
    arrays = criteria.gain_shrink(np.array([1.0, 0.0]), np.array([0.0, 0.0]), np.array([0.0, 1.0]), np.zeros(2), 1.0)
    assert [a.tolist() for a in arrays] == [[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]
    for module in (cropping_reports, colour_reports, contrastive_reports, fixed_reports):  # D2-D5 use it
        assert "gain_shrink(" in inspect.getsource(module), f"{module.__name__} computes the control on its own"


def test_criteria_keeps_no_boundary_of_its_own():
    assert [n for n in vars(criteria) if n.isupper()] == []  # the boundaries are the protocol's shared parts
