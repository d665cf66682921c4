import pytest
import torch

from invlib.linear import fit_logistic


def _problem(n=300, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    return x, g


def test_binary_fit_ranks_by_the_informative_feature_and_keeps_the_dtype():
    x, _ = _problem()
    w, b = fit_logistic(x, torch.sign(x[:, 2]), 1e-3, max_iter=300)
    assert b is None and w.shape == (6,) and w.dtype == torch.float32 and not w.requires_grad
    assert int(w.abs().argmax()) == 2 and float((torch.sign(x @ w) == torch.sign(x[:, 2])).float().mean()) > 0.97


def test_binary_bias_absorbs_a_shift():
    x, _ = _problem()
    y = torch.sign(x[:, 0] + 1.0)
    w, b = fit_logistic(x.double(), y.double(), 1e-4, bias=True, max_iter=300)
    assert b.shape == () and float(b) > 0.5 and w.dtype == torch.float64


def test_multinomial_fit_has_one_column_per_class_and_a_larger_penalty_shrinks_the_weights():
    x, g = _problem(d=4)
    y = torch.randint(0, 3, (300,), generator=g)
    x = (x + 3 * torch.nn.functional.one_hot(y, 4)).double()
    w, b = fit_logistic(x, y, 1e-3, classes=5, bias=True, max_iter=200)
    assert w.shape == (4, 5) and b.shape == (5,)
    assert float(((x @ w + b).argmax(1) == y).double().mean()) > 0.95
    strong, _ = fit_logistic(x, y, 1.0, bias=True, max_iter=200)
    assert strong.shape == (4, 3) and strong.norm() < w[:, :3].norm()


def test_the_fit_is_deterministic_and_minimises_the_stated_objective():
    x, _ = _problem(d=3)
    y = torch.sign(x[:, 0] + 0.3 * torch.randn(300, generator=torch.Generator().manual_seed(1)))
    w1, _ = fit_logistic(x, y, 0.05, max_iter=300)
    w2, _ = fit_logistic(x, y, 0.05, max_iter=300)
    assert torch.equal(w1, w2)
    w = w1.clone().requires_grad_(True)  # the gradient of mean softplus(-y x w) + 0.05 |w|^2 vanishes there
    (torch.nn.functional.softplus(-y * (x @ w)).mean() + 0.05 * (w ** 2).sum()).backward()
    assert float(w.grad.abs().max()) < 1e-4


def test_bad_shapes_say_what_they_need():
    with pytest.raises(ValueError, match=r"x \(N, D\) and y \(N,\)"):
        fit_logistic(torch.randn(5, 2), torch.ones(4), 0.1)
