"""invlib.papers.d.criteria: paper D's shared boundaries, declared once, each with its reason, and used by every
chapter that tests the same statement."""

import inspect

import pytest

from invlib.papers.d import contrastive_reports, criteria, cropping_reports, fixed_reports

SHARED = {"INPUT_DEPENDENT_KL": (cropping_reports, contrastive_reports, fixed_reports),
          "SIZE_FOLLOWS_OBJECT_RHO": (cropping_reports, contrastive_reports),
          "ENTROPY_IN_BAND_SHARE": (cropping_reports, contrastive_reports),
          "ON_OBJECT": (cropping_reports, contrastive_reports)}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_each_boundary_has_a_value_and_a_reason(name):
    boundary, reason = getattr(criteria, name)
    assert isinstance(boundary, float) and boundary > 0 and len(reason) > 20


@pytest.mark.parametrize("name", sorted(SHARED))
def test_every_chapter_that_tests_the_statement_uses_the_shared_boundary(name):
    for module in SHARED[name]:
        assert name in inspect.getsource(module), f"{module.__name__} judges this statement with a boundary of its own"


def test_gain_shrink_is_the_one_difference_of_differences_of_every_data_control():
    import numpy as np
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
