import os

import pytest
import torch

from invlib import utils
from invlib.__main__ import main


def test_check_choice_suggests_and_lists():
    assert utils.check_choice("sgd", ["adam", "sgd"], "optimizer") == "sgd"
    with pytest.raises(ValueError, match="Did you mean 'adam'.*Valid optimizers: adam, sgd"):
        utils.check_choice("adma", ["sgd", "adam"], "optimizer")


def test_atomic_save_leaves_no_temporary_files(tmp_path):
    path = utils.atomic_save({"w": torch.ones(3)}, tmp_path / "sub" / "x.pt")
    assert torch.equal(torch.load(path)["w"], torch.ones(3))
    assert os.listdir(tmp_path / "sub") == ["x.pt"]


def test_offline_switches_and_devices(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not utils.is_online()
    assert utils.resolve_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert utils.resolve_device("cuda:1") == torch.device("cuda", 1)  # named devices pass through
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="CUDA is not available here: pass device='cpu'"):
        utils.resolve_device("cuda:1")  # where there is none: say how to run on the CPU
    for available, expected in [(False, "cpu"), (True, "cuda")]:  # None and "auto": CUDA exactly when available
        monkeypatch.setattr(torch.cuda, "is_available", lambda a=available: a)
        assert utils.resolve_device(None) == utils.resolve_device("auto") == torch.device(expected)


def test_cache_dir_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    assert utils.cache_dir("zoo") == tmp_path / "zoo" and (tmp_path / "zoo").is_dir()


def test_cli_lists_zoo_and_rejects_bad_profile(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))  # an empty zoo, whatever other tests trained
    assert main(["zoo", "list", "--profile", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "small_resnet18/standard" in out and "missing" in out
    with pytest.raises(SystemExit):
        main(["zoo", "train", "--profile", "laptop"])
    err = capsys.readouterr().err
    assert "invalid choice: 'laptop'" in err and all(p in err for p in ("cpu", "gpu", "paper", "smoke"))
    assert main(["zoo", "train", "--profile", "smoke", "--only", "small_resnet/none"]) == 2
    assert "Unknown zoo entry 'small_resnet/none'" in capsys.readouterr().err


def test_cached_computes_once_and_a_new_version_or_a_corrupt_file_recomputes(monkeypatch, tmp_path):

    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    calls = []

    def make():
        calls.append(1)
        return {"n": len(calls)}

    assert utils.cached("t", "k", make, version=1) == {"n": 1}
    assert utils.cached("t", "k", make, version=1) == {"n": 1} and len(calls) == 1
    assert utils.cached("t", "k", make, version=2) == {"n": 2}, "a new version is a new value"
    utils.cache_path("t", "k", version=2).write_bytes(b"torn")
    with pytest.warns(UserWarning, match="unreadable"):
        assert utils.cached("t", "k", make, version=2) == {"n": 3}
    assert utils.cached("t", "m", make, memory=True, disk=False) == {"n": 4}
    assert utils.cached("t", "m", make, memory=True, disk=False) == {"n": 4} and len(calls) == 4
    assert not utils.cache_path("t", "m").exists(), "disk=False writes nothing"


def test_cached_many_makes_only_the_missing_values_in_one_call(monkeypatch, tmp_path):
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    asked = []

    def make(keys):
        asked.append(list(keys))
        return {k: torch.full((2,), float(k)) for k in keys}

    first = utils.cached_many("t", {1: "one", 2: "two"}, make, version=1, weights_only=True)
    again = utils.cached_many("t", {2: "two", 1: "one", 3: "three"}, make, version=1, weights_only=True)
    assert asked == [[1, 2], [3]] and list(again) == [2, 1, 3] and torch.equal(first[2], again[2])
    assert utils.cached("t", "two", lambda: pytest.fail("recomputed"), version=1)[0] == 2.0, "one cache, two doors"
    assert utils.cached_many("t", {1: "one"}, make, version=2)[1][0] == 1.0 and asked[-1] == [1]
    assert utils.cached_many("t", {4: "four"}, make, disk=False) and not utils.cache_path("t", "four").exists()


def test_cached_values_are_logged_for_the_runner_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(utils.CACHE_LOG_ENV, raising=False)
    name = utils.digest(os.urandom(4).hex())
    utils.cached("logtest", name, lambda: 1)  # no log asked for: nothing written
    log = tmp_path / "caches.log"
    monkeypatch.setenv(utils.CACHE_LOG_ENV, str(log))
    assert utils.cached("logtest", name, lambda: 2) == 1
    assert utils.cached("logtest", name + "b", lambda: 3, version=1) == 3
    assert utils.cached_many("logtest", {"k": name + "b"}, lambda keys: {"k": 4}, version=1) == {"k": 3}
    path, other = utils.cache_path("logtest", name), utils.cache_path("logtest", name + "b", 1)
    assert log.read_text().splitlines() == [f"read\t{path}", f"write\t{other}", f"read\t{other}"]
    assert path.name == f"{name}.pt", "the log leaves the cache's keys and files as they were"


def test_allocator_env_takes_the_first_installed_and_says_what_is_missing(monkeypatch):
    import ctypes.util
    import sys

    monkeypatch.delenv(utils.ALLOCATOR_ENV, raising=False)
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    installed = {"jemalloc": "libjemalloc.so.2"}
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: installed.get(name))
    assert utils.allocator_env() == {"LD_PRELOAD": "libjemalloc.so.2"}  # tcmalloc missing: the next one
    installed["tcmalloc_minimal"] = "libtcmalloc_minimal.so.4"
    env = utils.allocator_env()
    assert env["LD_PRELOAD"] == "libtcmalloc_minimal.so.4" and int(env["TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD"]) > 2**32
    assert utils.allocator_name(env) == "tcmalloc" and utils.allocator_name({}) == "system"
    monkeypatch.setenv("LD_PRELOAD", "libmine.so")  # the user's own preload is kept, first
    assert utils.allocator_env("jemalloc")["LD_PRELOAD"] == "libmine.so libjemalloc.so.2"
    monkeypatch.setenv(utils.ALLOCATOR_ENV, "system")
    assert utils.allocator_env() == {} and utils.allocator_name() == "system"
    installed.clear()
    assert utils.allocator_env("auto") == {}
    with pytest.raises(RuntimeError, match="libjemalloc is not installed: install the Debian package libjemalloc2"):
        utils.allocator_env("jemalloc")
    with pytest.raises(ValueError, match="Valid allocators: auto, jemalloc, system, tcmalloc"):
        utils.allocator_env("mimalloc")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert utils.allocator_env("tcmalloc") == {}  # LD_PRELOAD is Linux's


@pytest.mark.slow  # two processes that import torch
def test_a_process_under_the_allocator_runs_it_and_trains_the_same_weights():
    import subprocess
    import sys

    env = utils.allocator_env()
    if not env:
        pytest.skip("no faster allocator installed here (make data installs tcmalloc as root)")
    child = ("import hashlib, torch\n"
             "from invlib import models\n"
             "torch.set_num_threads(1); torch.manual_seed(0)\n"
             "m = models.create('small_resnet18', img_size=28, seed=0)\n"
             "opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)\n"
             "for _ in range(3):\n"
             "    x, y = torch.rand(16, 3, 28, 28), torch.randint(0, 10, (16,))\n"
             "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
             "        loss = torch.nn.functional.cross_entropy(m(x), y)\n"
             "    opt.zero_grad(); loss.backward(); opt.step()\n"
             "maps = open('/proc/self/maps').read()\n"
             "h = hashlib.sha1(b''.join(v.numpy().tobytes() for v in m.state_dict().values()))\n"
             "print(h.hexdigest(), any(p.split('/')[-1] in maps for p in __import__('os').environ.get("
             "'LD_PRELOAD', '-').split()))\n")
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"} | {"OMP_NUM_THREADS": "1"}
    runs = [subprocess.run([sys.executable, "-c", child], env=base | extra, capture_output=True, text=True,
                           check=True).stdout.split() for extra in ({}, env)]
    assert runs[1][1] == "True", f"{env['LD_PRELOAD']} is not loaded in the process started with it"
    assert runs[0][0] == runs[1][0], "the allocator changed what was computed"
