import pytest

from invlib.profiles import PROFILES, get_profile


def test_profiles_scale_up_and_bad_names():
    assert list(PROFILES) == ["smoke", "cpu", "gpu", "paper"]
    assert get_profile("smoke").n_train < get_profile("cpu").n_train <= get_profile("gpu").n_train
    assert get_profile("cpu").device == "cpu" and get_profile("gpu").device == "cuda"
    assert get_profile(get_profile("cpu")) is get_profile("cpu")
    with pytest.raises(ValueError, match="Did you mean 'smoke'.*Valid profiles: cpu, gpu, paper, smoke"):
        get_profile("smok")


def test_replace_checks_field_names():
    assert get_profile("cpu").replace(epochs=1).epochs == 1
    with pytest.raises(ValueError, match="Valid profile fields: .*n_train"):
        get_profile("cpu").replace(n_trian=5)
