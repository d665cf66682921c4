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


def test_replace_and_resolve_check_types():
    from invlib.profiles import resolve

    assert resolve("smoke", dataset=None, epochs=3).epochs == 3
    assert resolve("cpu", dataset="cifar10").dataset == "cifar10"
    with pytest.raises(TypeError, match="profile field 'epochs' must be int, got str 'three'"):
        resolve("cpu", epochs="three")
    with pytest.raises(TypeError, match="profile field 'progress' must be bool, got int 1"):
        get_profile("cpu").replace(progress=1)
    with pytest.raises(TypeError, match="must be int, got bool"):
        get_profile("cpu").replace(n_train=True)
    with pytest.raises(TypeError, match="profile must be a name"):
        get_profile(3)


def test_invlib_progress_env_turns_bars_off(monkeypatch):
    monkeypatch.setenv("INVLIB_PROGRESS", "0")
    assert get_profile("cpu").progress is False
    monkeypatch.delenv("INVLIB_PROGRESS")
    assert get_profile("cpu").progress is True


def test_settings_layers_paper_defaults_profile_table_and_overrides():
    import dataclasses

    from invlib.profiles import settings

    @dataclasses.dataclass(frozen=True)
    class Paper:
        profile: str = "paper"
        epochs: int = 200
        widths: tuple[int, ...] = (64, 128)
        root: str | None = None
        lr: float = 0.1

    table = {"cpu": dict(epochs=4, widths=(8, 16)), "smoke": dict(epochs=1)}
    assert settings(Paper, table, "paper") == Paper()
    cpu = settings(Paper, table, "cpu", epochs=None, lr=1, root="/data")
    assert (cpu.profile, cpu.epochs, cpu.widths, cpu.lr, cpu.root) == ("cpu", 4, (8, 16), 1.0, "/data")
    assert settings(Paper, table, "smoke", widths=[4, 4]).widths == (4, 4)  # papermill passes lists
    with pytest.raises(dataclasses.FrozenInstanceError):
        cpu.epochs = 3
    with pytest.raises(ValueError, match="Did you mean 'epochs'.*Valid Paper fields: epochs, lr, profile"):
        settings(Paper, table, "cpu", epoch=3)
    with pytest.raises(TypeError, match=r"'widths' must be tuple\[int, \.\.\.\], got list \[8, 'x'\]"):
        settings(Paper, table, "cpu", widths=[8, "x"])
    with pytest.raises(TypeError, match="'root' must be str | None"):
        settings(Paper, table, "cpu", root=3)
    with pytest.raises(ValueError, match="unknown profile"):
        settings(Paper, {"laptop": {}}, "cpu")
    with pytest.raises(ValueError, match="Unknown profile 'laptop'"):
        settings(Paper, table, "laptop")


def test_settings_fill_the_device_and_progress_from_the_profile_once(monkeypatch):
    from invlib.papers.b import rrc

    monkeypatch.delenv("INVLIB_PROGRESS", raising=False)
    S = rrc.settings("gpu")
    assert (S.device, S.progress) == ("cuda", True)
    assert rrc.settings("gpu", device="cpu").device == "cpu", "an override wins"
    monkeypatch.setenv("INVLIB_PROGRESS", "0")
    assert rrc.settings("cpu").progress is False, "the book runner turns progress bars off"


def test_every_papers_settings_get_the_device_and_progress_of_the_profile(monkeypatch):
    from invlib.papers.a import tables
    from invlib.papers.b import grounding, rrc
    from invlib.papers.c import equivariance
    from invlib.papers.e import experiments

    makers = {"tables": tables.settings, "grounding": grounding.settings, "rrc": rrc.settings,
              "equivariance": equivariance.settings,
              **{e: lambda p, e=e, **o: experiments.settings(p, experiment=e, **o) for e in experiments.TABLES}}
    monkeypatch.delenv("INVLIB_PROGRESS", raising=False)
    for name, make in makers.items():
        for profile in ("smoke", "gpu"):
            S = make(profile)
            assert (S.device, S.progress) == (get_profile(profile).device, True), (name, profile)
        assert make("smoke", device="cuda", progress=False).device == "cuda", f"{name}: -p device=cuda wins"
        with pytest.raises(TypeError, match="'progress' must be bool"):
            make("smoke", progress="yes")
    monkeypatch.setenv("INVLIB_PROGRESS", "0")
    assert not any(make("gpu").progress for make in makers.values()), "INVLIB_PROGRESS=0 turns every bar off"
