"""Warm kernels: the chapters' Jupyter kernels forked from one process that imported the heavy libraries once.

Every chapter runs in a fresh kernel, and a fresh kernel spends about 5 s of CPU importing torch, torchvision,
timm and kornia before the chapter's first line runs: about 2 minutes of CPU in a book of 24 chapters, 1 minute of a
build on 2 cores (``benchmarks/measurements/foundation.md``). The runner therefore starts one server (a "zygote",
:class:`Zygote`) that imports :data:`PRELOAD` once and forks a kernel for each chapter. A fork shares the imported
modules and starts as they left them, so a chapter computes exactly what it computes in a kernel of its own: the
server runs no computation before it forks (it checks that it runs one thread, as a fork needs), and imports nothing
of invlib (whose settings read the chapter's environment).

How a kernel starts: jupyter_client runs ``python invlib/kernels.py kernel -f <connection file> ...``
(:func:`kernel_command`) in place of ``python -m ipykernel_launcher``. That small process (the "client", no
torch in it) sends the server its arguments, environment, working folder and standard streams, and the server forks
the kernel. The client stays what jupyter_client sees as the kernel's process: it passes on the signals it gets
(an interrupt, a terminate) and exits with the kernel's exit status; killed outright, its kernel sees a pipe close
and exits. Where the server is not there, refuses (the environment that the preloaded libraries read at import,
:func:`fingerprint`, differs from the server's), or has failed, the client becomes an ordinary kernel
(``python -m ipykernel_launcher``), so a warm kernel is never needed for a chapter to run.

Example
-------
>>> with Zygote(preload=("json",)) as z:          # doctest: +SKIP
...     os.environ[SOCKET_ENV] == z.path
True
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]  # run as a script: invlib's own modules (utils, data, ...) must not shadow anything

import json
import selectors
import signal
import socket
import subprocess
import tempfile
import threading
import time

# What the server imports before it forks: the libraries every chapter's first cell imports (not invlib, whose
# modules read the chapter's own environment at import). matplotlib is left out: it reads its backend from the
# environment at import, which ipykernel sets inside the kernel, after the fork.
PRELOAD = ("numpy", "torch", "torchvision", "torchvision.transforms.v2", "timm", "kornia", "pandas", "scipy.stats",
           "sklearn.linear_model", "ipykernel.kernelapp")
SOCKET_ENV = "INVLIB_WARM_KERNELS"  # the server's socket, set in the runner's environment while it runs
# Environment variables a preloaded library reads when it is imported (threads, allocators, backends): a kernel
# whose environment has other values for these than the server's starts cold.
_READ_AT_IMPORT = ("OMP_", "GOMP_", "KMP_", "MKL_", "OPENBLAS_", "TORCH", "PYTORCH", "CUDA", "NVIDIA", "LD_",
                   "PYTHON", "MALLOC", "TCMALLOC", "TIMM", "HF_", "KORNIA", "DNNL", "ONEDNN", "ATEN")
_MESSAGE = 1 << 20  # the largest request: arguments and environment


def fingerprint(env: dict | None = None) -> list[list[str]]:
    """The variables of ``env`` (default ``os.environ``) that the preloaded libraries read when imported, sorted:
    a kernel forked from the server starts with the server's values of these, so they must be the kernel's own.

    Example
    -------
    >>> fingerprint({"OMP_NUM_THREADS": "1", "INVLIB_CHAPTER": "a1", "HOME": "/root"})
    [['OMP_NUM_THREADS', '1']]
    """
    env = os.environ if env is None else env
    return sorted([k, v] for k, v in env.items() if k.startswith(_READ_AT_IMPORT))


def kernel_command(cmd: list[str]) -> list[str]:
    """jupyter_client's command for a Python kernel (``[python, -m, ipykernel_launcher, -f, file, ...]``) made to
    start a warm kernel when the runner's server is up (``$INVLIB_WARM_KERNELS``); any other command as it is.

    Example
    -------
    >>> os.environ.pop(SOCKET_ENV, None) and None
    >>> kernel_command(["python", "-m", "ipykernel_launcher", "-f", "k.json"])
    ['python', '-m', 'ipykernel_launcher', '-f', 'k.json']
    """
    if not os.environ.get(SOCKET_ENV) or cmd[1:3] != ["-m", "ipykernel_launcher"]:
        return cmd
    return [cmd[0], os.path.abspath(__file__), "kernel", *cmd[3:]]


class Zygote:
    """The server warm kernels fork from, for the lifetime of a ``with`` block: it sets ``$INVLIB_WARM_KERNELS``
    there (processes started inside inherit it), and stops the server and every kernel still running at the end.

    ``env``: the server's environment (default this process's), which should be the kernels' own as far as
    :func:`fingerprint` reads it. ``preload``: the modules it imports (:data:`PRELOAD`). The server binds its socket
    before it imports, so the runner never waits for it: the first kernels wait for the imports instead of doing
    them.

    Example
    -------
    >>> with Zygote(preload=("json",)) as z:                         # doctest: +SKIP
    ...     pass   # chapters executed here start warm
    """

    def __init__(self, env: dict | None = None, preload: tuple[str, ...] = PRELOAD):
        self.env, self.preload = dict(os.environ if env is None else env), tuple(preload)
        self.proc, self.folder, self.path, self._old = None, None, None, None

    def __enter__(self) -> Zygote:
        self.folder = tempfile.mkdtemp(prefix="invlib-kernels-")
        self.path = os.path.join(self.folder, "server")
        env = {k: v for k, v in self.env.items() if k != SOCKET_ENV}
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "serve", self.path,
                                      ",".join(self.preload)], env=env, stdin=subprocess.PIPE,
                                     start_new_session=True)
        for _ in range(300):  # bound within a few tenths of a second, before the server's imports
            if os.path.exists(self.path) or self.proc.poll() is not None:
                break
            time.sleep(0.01)
        self._old = os.environ.get(SOCKET_ENV)
        os.environ[SOCKET_ENV] = self.path
        return self

    def __exit__(self, *exc) -> None:
        if self._old is None:
            os.environ.pop(SOCKET_ENV, None)
        else:
            os.environ[SOCKET_ENV] = self._old
        if self.proc is not None:
            self.proc.stdin.close()  # the server stops when its standard input closes
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for name in os.listdir(self.folder):
            os.unlink(os.path.join(self.folder, name))
        os.rmdir(self.folder)


# ------------------------------------------------------------------------------------------------- the server
def serve(path: str, preload: tuple[str, ...]) -> None:
    """The server's loop (``python invlib/kernels.py serve PATH MODULES``): bind ``path``, import ``preload``,
    then fork a kernel for each request, one thread throughout; stop when standard input closes, killing the
    kernels still running."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    mine = fingerprint()
    import importlib

    why = None
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception as err:  # a library missing here: every kernel starts cold, and says nothing of it
            why = f"import {name}: {type(err).__name__}: {err}"
            break
    if why is None and max(threading.active_count(), _threads()) > 1:
        why = f"the server runs {_threads()} threads after its imports; a fork needs one"
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stop")
    children: dict[int, socket.socket] = {}  # a kernel's pid -> its client's connection
    try:
        while True:
            for key, _ in sel.select(timeout=0.2):
                if key.data == "stop":
                    return
                if key.data == "accept":
                    conn, _ = listener.accept()
                    _answer(conn, mine, why, listener, sel, children)
                else:  # a client closed its connection: it is gone, so is its kernel
                    pid = key.data
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    children.pop(pid, None)
                    _kill(pid)
            _reap(children, sel)
    finally:
        for pid in children:
            _kill(pid)
        _reap(children, sel)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _answer(conn, mine, why, listener, sel, children) -> None:
    """Read one request; refuse it (the client starts cold) or fork its kernel."""
    try:
        data, fds, _, _ = socket.recv_fds(conn, _MESSAGE, 4)
        request = json.loads(data)
    except (OSError, ValueError):
        conn.close()
        return
    if why is None and request.get("fingerprint") != mine:
        why = "its environment differs from the server's in what the preloaded libraries read at import"
    if why is not None or len(fds) != 4:
        conn.send(json.dumps({"ok": False, "why": why or "no streams"}).encode())
        conn.close()
        for fd in fds:
            os.close(fd)
        return
    pid = os.fork()
    if pid == 0:  # the kernel
        code = 1
        try:
            sel.close()
            listener.close()
            for other in children.values():
                other.close()
            conn.close()
            code = _kernel(request, fds)
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    children[pid] = conn
    sel.register(conn, selectors.EVENT_READ, pid)
    conn.send(json.dumps({"ok": True, "pid": pid}).encode())


def _kernel(request: dict, fds: list[int]) -> int:
    """In the forked child: take the client's streams, folder and environment, and run ipykernel."""
    os.setsid()  # a session of its own, as jupyter_client starts a kernel
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
        os.close(fd)
    watch = fds[3]

    def watchdog():  # the client holds the other end: it closes when the client dies, however it dies
        while os.read(watch, 1):
            pass
        os._exit(1)

    threading.Thread(target=watchdog, daemon=True).start()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # ipykernel reads $JPY_PARENT_PID when it is imported (the server's, where it is unset): given here, the kernel
    # knows it has a parent and prints no banner for a terminal ("To connect another client to this kernel ...")
    parent = request["env"].get("JPY_PARENT_PID")
    sys.argv = [request["argv0"], *([f"--IPKernelApp.parent_handle={parent}"] if parent else []), *request["args"]]
    from ipykernel import kernelapp

    try:
        kernelapp.launch_new_instance()
    except SystemExit as end:
        return end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
    return 0


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(children: dict, sel) -> None:
    """Collect the kernels that ended and tell their clients how."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            sel.unregister(conn)
            try:
                conn.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
            except OSError:
                pass
            conn.close()


# ------------------------------------------------------------------------------------------------- the client
def client(args: list[str]) -> None:
    """What jupyter_client starts as the kernel (``python invlib/kernels.py kernel ARGS``): a warm kernel from the
    server when it takes the request, else an ordinary one (this process becomes ``python -m ipykernel_launcher
    ARGS``)."""
    path, conn, reply = os.environ.get(SOCKET_ENV), None, None
    watch_r, watch_w = os.pipe()
    if path:
        try:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            conn.connect(path)
            request = dict(args=args, argv0="ipykernel_launcher", cwd=os.getcwd(), env=dict(os.environ),
                           fingerprint=fingerprint())
            socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2, watch_r])
            reply = json.loads(conn.recv(_MESSAGE) or b"{}")
        except (OSError, ValueError):
            reply = None
    os.close(watch_r)
    if not reply or not reply.get("ok"):
        if conn is not None:
            conn.close()
        os.close(watch_w)
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *args])
    pid = reply["pid"]

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, forward)
    try:
        end = json.loads(conn.recv(_MESSAGE) or b"{}")
    except (OSError, ValueError):
        end = {}
    sys.exit(end.get("exit", 1))


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2], tuple(m for m in sys.argv[3].split(",") if m))
    elif sys.argv[1:2] == ["kernel"]:
        client(sys.argv[2:])
    else:
        sys.exit("usage: kernels.py serve PATH MODULES | kernels.py kernel ARGS")
