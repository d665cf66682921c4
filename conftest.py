"""Test-wide settings (unit tests and the docstring examples in invlib/): no hub access, generated files in a
temporary cache, a deterministic CPU."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("INVLIB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _test_cache(tmp_path_factory):
    """Every test session writes caches (zoo, NLTK data, features) into its own temporary folder."""
    old = os.environ.get("INVLIB_CACHE")
    os.environ["INVLIB_CACHE"] = str(tmp_path_factory.mktemp("invlib-cache"))
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    yield
    if old is None:
        os.environ.pop("INVLIB_CACHE", None)
    else:
        os.environ["INVLIB_CACHE"] = old
