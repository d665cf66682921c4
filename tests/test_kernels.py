"""Warm kernels (invlib.kernels): a chapter's kernel forked from the runner's server runs where and as a kernel
of its own would, ends with its client, and starts cold wherever the server cannot serve it."""

import json
import os
import signal
import subprocess
import sys
import time

import nbformat
import pytest

from invlib import book, kernels


def _run_cell(tmp_path, code: str) -> dict:
    """Execute one cell in a kernel started as the runner starts a chapter's (book._papermill); the cell writes
    a JSON dict to out.json, which is returned."""
    out = tmp_path / "out.json"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"import json, os\nfrom pathlib import Path\nPath({str(out)!r}).write_text(json.dumps({code}))")])
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    book._papermill(nb, tmp_path / "run.ipynb", {}, tmp_path)
    return json.loads(out.read_text())


WHERE = "dict(ppid=os.getppid(), pid=os.getpid(), cwd=os.getcwd(), mark=os.environ.get('KERNEL_TEST_MARK'))"


def test_a_kernel_is_forked_from_the_server_with_its_own_environment_and_folder(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("KERNEL_TEST_MARK", "seen")
    with kernels.Zygote(preload=("ipykernel.kernelapp",)) as z:
        monkeypatch.setenv("KERNEL_TEST_MARK", "the kernel's own")  # set after the server started
        got = _run_cell(tmp_path, WHERE)
        # it knows jupyter_client's process is its parent: no banner for a terminal on the runner's output
        assert "connect another client" not in capfd.readouterr().out
        assert got["ppid"] == z.proc.pid
        assert got["mark"] == "the kernel's own"
        assert os.path.realpath(got["cwd"]) == os.path.realpath(tmp_path)
        assert kernels.SOCKET_ENV in os.environ
    assert kernels.SOCKET_ENV not in os.environ
    assert z.proc.returncode is not None  # the server stopped with the block


@pytest.mark.slow
def test_a_kernel_starts_cold_where_the_server_refuses_or_is_gone(tmp_path, monkeypatch):
    env = {**os.environ, "OMP_NUM_THREADS": "7"}  # what torch reads at import differs from the kernels' own
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with kernels.Zygote(env, preload=()) as z:
        got = _run_cell(tmp_path, WHERE)
        assert got["ppid"] not in (z.proc.pid,)
    monkeypatch.setenv(kernels.SOCKET_ENV, str(tmp_path / "no server here"))
    got = _run_cell(tmp_path, WHERE)
    assert got["ppid"] == os.getpid()  # the client became the kernel itself: jupyter_client's own child


def test_the_command_is_changed_only_while_a_server_is_up(monkeypatch):
    cmd = ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "k.json"]
    monkeypatch.delenv(kernels.SOCKET_ENV, raising=False)
    assert kernels.kernel_command(cmd) == cmd
    monkeypatch.setenv(kernels.SOCKET_ENV, "/tmp/x")
    assert kernels.kernel_command(cmd) == ["/usr/bin/python3", kernels.__file__, "kernel", "-f", "k.json"]
    assert kernels.kernel_command(["julia", "-i"]) == ["julia", "-i"]


def _stat(pid) -> list[str]:
    """Fields of /proc/<pid>/stat after the command's name: [state, ppid, ...]; [] for a process gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()
    except OSError:
        return []


def _children(pid: int) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _stat(p)[1:2] == [str(pid)]]


def test_a_kernel_ends_when_its_client_is_killed(tmp_path):
    """The client is what jupyter_client kills; its forked kernel must not outlive it."""
    with kernels.Zygote(preload=("ipykernel.kernelapp",)) as z:
        conn = tmp_path / "k.json"
        client = subprocess.Popen([sys.executable, kernels.__file__, "kernel", "-f", str(conn)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):  # the kernel writes its connection file once it runs
            if conn.exists():
                break
            time.sleep(0.1)
        kernel = _children(z.proc.pid)
        assert conn.exists() and len(kernel) == 1
        client.send_signal(signal.SIGKILL)
        client.wait()
        for _ in range(100):
            if _stat(kernel[0])[:1] in ([], ["Z"]):
                break
            time.sleep(0.05)
        assert _stat(kernel[0])[:1] in ([], ["Z"])


@pytest.mark.slow
def test_a_warm_kernel_imports_torch_once_with_the_threads_of_its_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with kernels.Zygote(preload=("torch", "ipykernel.kernelapp")) as z:
        got = _run_cell(tmp_path, "dict(ppid=os.getppid(), preloaded='torch' in __import__('sys').modules, "
                                  "threads=__import__('torch').get_num_threads())")
    assert got == dict(ppid=z.proc.pid, preloaded=True, threads=1)
