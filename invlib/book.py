"""The book runner: execute every notebook of ``_toc.yml`` with papermill, then build the site with Jupyter Book.

``python -m invlib book --profile cpu`` (``make book``) does, for each chapter listed in ``_toc.yml`` under
``book/_generated/``:

1. read ``notebooks/<name>.py`` (Jupytext percent format) into a notebook in memory (the ``.py`` is never
   written to);
2. check the ``-p key=value`` overrides against the notebook's ``parameters`` cell (unknown names and wrong
   types fail before anything runs);
3. execute it with papermill, injecting ``profile`` and the overrides, in the repository root, with the
   chapter's name in the kernel's environment as ``INVLIB_CHAPTER`` (so ``results.Run(S)`` writes
   ``results/<profile>/<name>.json`` without the chapter typing its own name);
4. tag the injected-parameters cell ``remove-cell`` and write the executed notebook to
   ``book/_generated/<name>.ipynb``, its seconds in the notebook's metadata and, as ``book_seconds``, in the
   chapter's ``results/<profile>/<name>.json``, and the cache namespaces it read and wrote in the metadata
   (``invlib.caches``, :func:`cache_use`);

then writes the "Reproduction scoreboard" page and each paper's claims snippet (``book/_generated/scoreboard.md``,
``claims_<a..e>.md``, see :func:`invlib.scoreboard.write_scoreboard`) from the claims the runs recorded, runs
``jupyter-book build . -W -n --keep-going`` (the config has ``execute_notebooks: 'off'``) and checks
that ``_build/html/index.html`` exists, since Jupyter Book can exit 0 without building.

What the runner knows of a chapter it reads from :data:`invlib.papers.CHAPTERS`, the facts declared beside the
papers: its zoo models (trained in a phase before the chapters), its budget class (:func:`trains_a_family`,
:func:`budget`) and the order of a parallel build (:func:`after`: a chapter waits for the earlier ones that write
a cache it reads). The site shows repository, issues and launch buttons only when a repository is configured
(:func:`site_config`), and the chapters' warnings without the paths of the machine that built them
(:func:`plain_warnings`).

A failing cell stops everything with a :class:`NotebookError` naming the notebook and the cell; the notebook
executed up to the failure is kept as ``book/_generated/<name>.failed.ipynb``. With ``--only``, the other
chapters keep their last executed version; a chapter never executed becomes a page saying how to run it.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from functools import cache
from pathlib import Path
from unittest import mock

from . import kernels, papers
from .chapters import GENERATED, SOURCES, Chapter, results_root, toc_notebooks
from .profiles import BOOK_LIMIT_IMG_S, BOOK_LIMIT_S, PROFILES, Profile
from .scoreboard import DOWNLOADS, write_scoreboard
from .utils import CACHE_LOG_ENV, REPO, allocator_env, allocator_name, atomic_save, check_choice, check_type

# Seconds a chapter may take on 2 CPU cores: (any chapter, a chapter that trains a model family, see
# :func:`trains_a_family`); a chapter's own limit, where it has one, is declared in :data:`invlib.papers.CHAPTERS`.
# The runner's summary and benchmarks/bench_book.py compare each chapter's seconds with them; nothing fails on a
# slow machine.
BUDGETS = {"smoke": (60, 60), "cpu": (120, 300)}
ZOO_BUDGET = {"cpu": 300}
# Seconds of wall time of a whole build (``make book``: set-up, training phase, chapters two at once, site) on 2
# cores at the reference speed (REFERENCE_IMG_S of benchmarks/bench_train.py's bare loop): the main job's 40 minutes
# at about 900 img/s (invlib.profiles.BOOK_LIMIT_S), at 500 img/s; benchmarks/bench_book.py scales it.
REFERENCE_IMG_S = 500
BOOK_BUDGET = {"cpu": round(BOOK_LIMIT_S * BOOK_LIMIT_IMG_S / REFERENCE_IMG_S)}
# Every chapter computes on this many CPU threads, alone or beside others, so that one commit writes the same numbers
# on one machine whatever the parallelism: float sums split across threads differ in their last bits, and a trained
# model with them (D2 at cpu: InstaAug 49.8 % on one thread against 55.8 % on two). The runner parallelises by
# processes instead (:func:`default_jobs`). ``$INVLIB_THREADS`` changes it for a machine of one's own.
THREADS_ENV = "INVLIB_THREADS"
PHASE_ENV = "INVLIB_ZOO_PHASE"  # = invlib.zoo.PHASE_ENV (the zoo imports nothing of the runner)
FAMILY_PHASE_ENV = "INVLIB_FAMILY_PHASE"  # = invlib.train.FAMILY_PHASE_ENV
# When ``make`` started (seconds since the epoch; the Makefile sets it as it starts): the set-up before the runner (the
# environment, the data check) is then part of a whole build's record, as the main job's limit counts it.
MAKE_START_ENV = "INVLIB_MAKE_START"


def setup_seconds(now: float | None = None) -> float | None:
    """Seconds from ``make``'s start (``$INVLIB_MAKE_START``) to ``now`` (default: this moment): the set-up a whole
    build did before the runner; None when the runner was not started by ``make`` (or the value is not a time
    before ``now``).

    Example
    -------
    >>> import os
    >>> os.environ[MAKE_START_ENV] = "1000.0"
    >>> setup_seconds(now=1042.5), setup_seconds(now=900.0)
    (42.5, None)
    >>> del os.environ[MAKE_START_ENV]
    >>> setup_seconds() is None
    True
    """
    value = os.environ.get(MAKE_START_ENV, "")
    try:
        started = float(value)
    except ValueError:
        return None
    seconds = (time.time() if now is None else now) - started
    return seconds if seconds >= 0 else None


def chapter_threads() -> int:
    """CPU threads of every chapter's kernel: ``$INVLIB_THREADS``, default 1.

    Example
    -------
    >>> chapter_threads()
    1
    """
    value = os.environ.get(THREADS_ENV, "1")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"${THREADS_ENV} is the CPU threads of each chapter, a whole number >= 1; got {value!r}")
    return int(value)  # seconds to train the whole model zoo (``python -m invlib zoo train``), cold cache


class NotebookError(RuntimeError):
    """A cell of a notebook failed; the message names the notebook, the cell and the error."""


class BuildError(RuntimeError):
    """Jupyter Book reported warnings or errors, or built no site."""


def read_notebook(name: str, root: str | Path = REPO):
    """The Jupytext source ``notebooks/<name>.py`` as an in-memory notebook (nbformat v4), ready for papermill.

    Example
    -------
    >>> nb = read_notebook("00_data_and_transforms")
    >>> any("parameters" in c.metadata.get("tags", []) for c in nb.cells)
    True
    """
    import jupytext

    src = Path(root) / SOURCES / f"{name}.py"
    if not src.exists():
        raise FileNotFoundError(f"_toc.yml lists {GENERATED / name} but its source {src} does not exist.")
    nb = jupytext.read(src, fmt="py:percent")
    nb.metadata["kernelspec"] = dict(name="python3", display_name="Python 3", language="python")
    nb.metadata.setdefault("language_info", {"name": "python"})
    return nb


def notebook_parameters(nb) -> dict:
    """``{name: default}`` of the assignments in the cell tagged ``parameters``.

    Example
    -------
    >>> notebook_parameters(read_notebook("00_data_and_transforms"))["profile"]
    'cpu'
    """
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"a notebook needs exactly one cell tagged 'parameters', found {len(cells)}")
    params = {}
    for node in ast.parse(cells[0].source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            params[node.targets[0].id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            params[node.target.id] = ast.literal_eval(node.value)
    return params


MAX_CODE_LINES = 70  # a chapter is parameters, a few calls, figures and prose


def code_lines(nb) -> int:
    """Lines of code a chapter holds outside its parameters cell: non-blank, non-comment lines of its code
    cells (at most :data:`MAX_CODE_LINES`; the experiment loops belong in ``invlib``).

    Example
    -------
    >>> code_lines(read_notebook("e3_capacity")) <= MAX_CODE_LINES
    True
    """
    return sum(1 for c in nb.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
               for line in c.source.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def parse_overrides(pairs: list[str] | None) -> dict:
    """``["epochs=2", "dataset=cifar10"]`` -> ``{"epochs": 2, "dataset": "cifar10"}`` (Python literals, else text).

    Example
    -------
    >>> parse_overrides(["epochs=2", "dataset=cifar10", "progress=false", "scale=0.5"])
    {'epochs': 2, 'dataset': 'cifar10', 'progress': False, 'scale': 0.5}
    """
    out = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ValueError(f"parameter {pair!r} is not key=value (e.g. -p dataset=cifar10)")
        words = {"true": True, "false": False, "none": None, "null": None}
        try:
            value = words[text.strip().lower()] if text.strip().lower() in words else ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        out[key.strip()] = value
    return out


def check_overrides(name: str, declared: dict, overrides: dict) -> dict:
    """The overrides this notebook declares, type-checked against the defaults of its ``parameters`` cell.

    A default of ``None`` accepts any value (the notebook resolves it, e.g. through :func:`invlib.profiles.resolve`).
    """
    mine = {}
    for key, value in overrides.items():
        if key not in declared:
            continue
        default = declared[key]
        if default is not None and value is not None:
            value = check_type(f"notebook {name}: parameter {key!r} (default {default!r})", value, type(default))
        mine[key] = value
    return mine


def execute(name: str, profile: str, overrides: dict | None = None, root: str | Path = REPO,
            threads: int | None = None) -> Chapter:
    """Execute one chapter with papermill and write ``book/_generated/<name>.ipynb``.

    ``threads``: CPU threads of the chapter's kernel (``OMP_NUM_THREADS``); None: :func:`chapter_threads` (1), so
    a chapter run alone computes exactly what it computes inside a parallel build.

    Example
    -------
    >>> ch = execute("00_data_and_transforms", "smoke")   # doctest: +SKIP
    >>> ch.status, ch.profile                            # doctest: +SKIP
    ('ok', 'smoke')
    """
    import nbformat
    import papermill as pm

    root = Path(root).resolve()
    profile = check_choice(profile, PROFILES, "profile")
    nb = read_notebook(name, root)
    params = dict(check_overrides(name, notebook_parameters(nb), overrides or {}), profile=profile)
    out_dir = root / GENERATED
    out_dir.mkdir(parents=True, exist_ok=True)
    running, failed = out_dir / f".{name}.running.ipynb", out_dir / f"{name}.failed.ipynb"
    cache_log = out_dir / f".{name}.caches.log"
    failed.unlink(missing_ok=True)
    cache_log.unlink(missing_ok=True)
    t0, started = time.perf_counter(), time.time()
    try:
        with _kernel_env(root, name, threads or chapter_threads(), cache_log):
            nb = _papermill(nb, running, params, root)
    except pm.PapermillExecutionError as err:
        if running.exists():
            running.replace(failed)
        cache_log.unlink(missing_ok=True)
        first = next((line for line in (err.source or "").splitlines() if line.strip()), "")
        raise NotebookError(f"notebook {name} ({profile}) failed in cell {err.cell_index} "
                            f"(execution count {err.exec_count}: {first.strip()!r}): {err.ename}: {err.evalue}\n"
                            f"The notebook up to the failure: {failed}") from None
    seconds = time.perf_counter() - t0
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    nb.metadata["invlib"] = dict(profile=profile, parameters=params, seconds=round(seconds, 2),
                                 caches=cache_use(cache_log))
    cache_log.unlink(missing_ok=True)
    atomic_save(nbformat.writes(nb), out_dir / f"{name}.ipynb")
    running.unlink(missing_ok=True)
    _note_seconds(results_root(root) / profile / f"{name}.json", seconds, since=started)
    return Chapter(name, "ok", seconds, profile)


def cache_use(log: Path) -> dict:
    r"""What a chapter did with the caches, from the log :func:`invlib.utils.cached` wrote while it ran
    (``$INVLIB_CACHE_LOG``): ``{"wrote": namespaces, "read": namespaces, "files": {"wrote": [...], "read": [...]}}``,
    a namespace being a folder under the cache (``"rrc"``) and a file ``"<namespace>/<file name>"``. ``read``
    leaves out the files the chapter wrote itself before reading them. The executed notebook keeps it in its
    metadata (``invlib.caches``); the smoke build checks it against :data:`invlib.papers.CHAPTERS`.

    Example
    -------
    >>> import tempfile
    >>> from invlib.utils import cache_dir
    >>> log = Path(tempfile.mkdtemp()) / "log"
    >>> _ = log.write_text(f"write\t{cache_dir('d9') / 'a.pt'}\nread\t{cache_dir('d9') / 'a.pt'}\n"
    ...                    f"read\t{cache_dir('rrc') / 'b.pt'}\n")
    >>> cache_use(log)
    {'wrote': ['d9'], 'read': ['rrc'], 'files': {'wrote': ['d9/a.pt'], 'read': ['rrc/b.pt']}}
    """
    from .utils import cache_dir

    root, files = cache_dir(), {"wrote": [], "read": []}
    for line in log.read_text().splitlines() if log.exists() else []:
        event, _, path = line.partition("\t")
        path = Path(path)
        file = path.relative_to(root).as_posix() if path.is_relative_to(root) else f"{path.parent.name}/{path.name}"
        kind = "wrote" if event == "write" else "read"
        if file not in files[kind] and (kind == "wrote" or file not in files["wrote"]):
            files[kind].append(file)
    space = lambda kind: sorted({f.rpartition("/")[0] for f in files[kind]})
    return dict(wrote=space("wrote"), read=space("read"), files={k: sorted(v) for k, v in files.items()})


KERNEL_START_TRIES = 3


def _papermill(nb, running: Path, params: dict, root: Path):
    """Run ``nb`` through papermill. A kernel that dies before it answers (``Kernel died before replying to
    kernel_info``) is started again, up to :data:`KERNEL_START_TRIES` times: jupyter_client picks the kernel's free
    ports before the kernel binds them, so two chapters starting at once can draw the same port (``ZMQError:
    Address already in use``). No cell has run when that happens, so a second start changes nothing else."""
    import papermill as pm

    for attempt in range(1, KERNEL_START_TRIES + 1):
        try:
            return pm.execute_notebook(nb, str(running), parameters=params, kernel_name="python3", cwd=str(root),
                                       progress_bar=False, language="python", kernel_manager_class=_kernel_manager(),
                                       extra_arguments=["--IPKernelApp.log_level=ERROR", KERNEL_START])
        except RuntimeError as err:
            if "before replying to kernel_info" not in str(err) or attempt == KERNEL_START_TRIES:
                raise
            time.sleep(0.5 * attempt)


def _kernel_manager():
    """The kernel manager papermill starts each chapter's kernel with: jupyter_client's, except that shutting down
    an idle kernel (after the last cell) sends it no interrupt (SIGINT) first, which its event loop reported as
    ``[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel`` at the end of a successful build."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietShutdownKernelManager(AsyncKernelManager):
        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:  # an interrupt the user asked for still goes through
                await super()._async_interrupt_kernel()

        def format_kernel_cmd(self, extra_arguments=None):  # a warm kernel while the runner's server is up
            return kernels.kernel_command(super().format_kernel_cmd(extra_arguments))

    return QuietShutdownKernelManager


def plain_warnings() -> None:
    r"""Show warnings as ``<category>: <message>``, without the file and line that raised them: a chapter's page
    then never shows the paths of the machine that built it. Each chapter's kernel calls it at start-up
    (:data:`KERNEL_START`).

    Example
    -------
    >>> plain_warnings()
    >>> warnings.formatwarning("too few seeds", UserWarning, "/home/me/invlib/x.py", 3)
    'UserWarning: too few seeds\n'
    """
    warnings.formatwarning = _format_warning


def _format_warning(message, category, filename, lineno, line=None) -> str:
    return f"{category.__name__}: {message}\n"


KERNEL_START = "--IPKernelApp.exec_lines=from invlib.book import plain_warnings; plain_warnings()"


def _note_seconds(path: Path, seconds: float, since: float) -> None:
    """Add the runner's seconds for the whole chapter (``book_seconds``) to the results JSON the chapter just
    wrote; a file older than this run (the chapter saved nothing) is left alone."""
    if path.exists() and path.stat().st_mtime >= since - 1:  # 1 s: file systems with coarse timestamps
        record = json.loads(path.read_text())
        record["book_seconds"] = round(seconds, 2)
        atomic_save(json.dumps(record, indent=2, allow_nan=False), path)


def _kernel_env(root: Path, name: str, threads: int | None = None, cache_log: Path | None = None):
    """Environment of the papermill kernel of chapter ``name`` (restored afterwards): no progress bars, results
    beside the book, the chapter's name as ``INVLIB_CHAPTER`` (:class:`invlib.results.Run` names its JSON file
    after it), this interpreter's folder first on PATH (so ``python3`` is this venv's kernel), OpenMP threads that
    spin briefly before they sleep while they wait (``GOMP_SPINCOUNT``, unless the environment sets a wait policy),
    with ``threads`` the kernel's OpenMP/MKL threads, and with ``cache_log`` the file the chapter's reads and writes
    of cached values go to (``$INVLIB_CACHE_LOG``, :func:`cache_use`). After the training phase, a chapter whose own
    family it trained gets ``$INVLIB_FAMILY_PHASE`` (:class:`invlib.train.FamilyPhaseWarning`). The kernel starts
    under a faster memory allocator where one is installed (:func:`invlib.utils.allocator_env`)."""
    env = dict(INVLIB_PROGRESS="0", PYDEVD_DISABLE_FILE_VALIDATION="1", INVLIB_RESULTS=str(results_root(root)),
               INVLIB_CHAPTER=name, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               **allocator_env())
    if cache_log is not None:
        env[CACHE_LOG_ENV] = str(cache_log)
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    if os.environ.get(PHASE_ENV) and papers.facts(name).family:  # its family came from the training phase
        env[FAMILY_PHASE_ENV] = "1"
    # How long a waiting OpenMP thread spins before it sleeps. Spinning threads once made a chapter 15x slower with
    # a core busy (c1 smoke: 432 s against 28 s), so waiting threads slept (OMP_WAIT_POLICY=PASSIVE). But on an
    # idle machine sleeping costs a chapter on 2 threads most of its second core on small models: one paper-B model
    # (small_resnet18_s4, 6,000 scenes, 2 threads) took 8.2 s passive, 5.2 s with OpenMP's default spinning, 4.6 s
    # spinning 10,000 rounds then sleeping (GOMP_SPINCOUNT), 9.1 s on one thread; with one core kept busy: 9.4,
    # 20.7 and 15.8 s. A chapter with more than one thread spins briefly; the user's own setting wins.
    if not any(k in os.environ for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        if (threads or os.cpu_count() or 1) > 1:
            env["GOMP_SPINCOUNT"] = "10000"
        else:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
    return mock.patch.dict(os.environ, env)


class _Ticker:
    """Rewrites ``line`` with the seconds elapsed, once a second, while a chapter runs (terminals only)."""

    def __init__(self, line: str, enabled: bool):
        self.line, self.enabled, self.stop = line, enabled, threading.Event()

    def _run(self):
        t0 = time.perf_counter()
        while not self.stop.wait(1.0):
            print(f"\r{self.line} {time.perf_counter() - t0:.0f} s", end="", flush=True)

    def __enter__(self):
        if self.enabled:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def __exit__(self, *exc):
        if self.enabled:
            self.stop.set()
            self.thread.join()
            print(f"\r{self.line} ", end="", flush=True)


def _reuse_or_stub(name: str, root: Path) -> Chapter:
    """For ``--only``: keep the last executed version of a chapter, or write a page saying how to make it."""
    import nbformat

    out = root / GENERATED / f"{name}.ipynb"
    if out.exists():
        meta = nbformat.read(out, as_version=4).metadata.get("invlib", {})
        return Chapter(name, "stub" if meta.get("stub") else "reused", 0.0, meta.get("profile", "?"))
    nb = read_notebook(name, root)
    title = next((line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                  if line.startswith("# ")), f"# {name}")
    note = (f"{title}\n\n```{{note}}\nThis chapter was not executed in this build. Run\n"
            f"`python -m invlib book --only {name}` (or `make book`) to execute it.\n```\n")
    stub = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(note)])
    stub.metadata["invlib"] = dict(profile="", stub=True)
    atomic_save(nbformat.writes(stub), out)
    return Chapter(name, "stub")


REPOSITORY_ENV = "INVLIB_REPOSITORY"  # the repository the site links to, for one build (else _config.yml's)
# What the site shows once a repository is configured: its repository and issues buttons and, on each chapter, the
# buttons that launch the executed notebook on Binder or Colab. Without a repository none of them.
WITH_REPOSITORY = {"html": {"use_repository_button": True, "use_issues_button": True},
                   "launch_buttons": {"notebook_interface": "jupyterlab", "binderhub_url": "https://mybinder.org",
                                      "colab_url": "https://colab.research.google.com"}}


def site_config(root: str | Path = REPO) -> dict:
    """The Jupyter Book configuration the site is built with: ``_config.yml``, and where a repository is
    configured (``$INVLIB_REPOSITORY``, else ``repository.url`` of ``_config.yml``) the buttons of
    :data:`WITH_REPOSITORY` pointing at it; without one the site has no repository, issues or launch button.

    Example
    -------
    >>> config = site_config()
    >>> bool(config["repository"]["url"]) == bool(config["html"].get("use_repository_button"))
    True
    """
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text())
    repository = config.setdefault("repository", {})
    repository["url"] = os.environ.get(REPOSITORY_ENV) or repository.get("url") or ""
    if repository["url"]:
        config.setdefault("html", {}).update(WITH_REPOSITORY["html"])
        config["launch_buttons"] = {**config.get("launch_buttons", {}), **WITH_REPOSITORY["launch_buttons"]}
        # sphinx-thebe's kernel configuration on every page: this repository, not its default example one
        thebe = dict(repository_url=repository["url"], repository_branch=repository.get("branch", "main"))
        config.setdefault("sphinx", {}).setdefault("config", {})["thebe_config"] = thebe
    return config


def build_site(root: str | Path = REPO) -> float:
    """``jupyter-book build <root> -W -n --keep-going`` with :func:`site_config`; raise :class:`BuildError` unless it
    made ``index.html``.

    The log goes to ``_build/jupyter-book.log``; on failure its warning lines are in the error message.
    """
    import yaml

    root = Path(root).resolve()
    html = root / "_build" / "html" / "index.html"
    html.unlink(missing_ok=True)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
           "build", str(root), "-W", "-n", "--keep-going"]
    config = site_config(root)
    if config["repository"]["url"]:  # a repository: the build reads a config with its buttons added
        extensions = config.get("sphinx", {}).get("local_extensions") or {}
        for name, folder in extensions.items():  # Jupyter Book finds them beside the config file it is given
            extensions[name] = str(root / folder)
        cmd += ["--config", str(atomic_save(yaml.safe_dump(config, sort_keys=False), root / "_build" / "_config.yml"))]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": ""})
    log = root / "_build" / "jupyter-book.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not html.exists():
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "WARNING" in ln or "ERROR" in ln]
        detail = "\n".join(lines[:30]) or (proc.stdout + proc.stderr)[-3000:]
        raise BuildError(f"jupyter-book build failed (exit {proc.returncode}, index.html "
                         f"{'present' if html.exists() else 'missing'}); full log: {log}\n{detail}")
    _name_icon_on_root_page(html)
    return time.perf_counter() - t0


def _name_icon_on_root_page(index: Path) -> None:
    """Jupyter Book's root ``index.html`` is a bare refresh to the first page. A browser that has not left it
    yet asks for ``/favicon.ico``, which the site does not have (a 404), so the page also names the book's
    icon from ``_static``."""
    found = re.search(r"url=([^\"'>\s]+)", index.read_text())
    icons = sorted((index.parent / "_static").glob("favicon.*"))
    if found and icons:
        index.write_text(f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
                         f'<meta http-equiv="Refresh" content="0; url={found.group(1)}" />'
                         f'<link rel="icon" href="_static/{icons[0].name}" /></head></html>\n')


def build(profile: str | Profile = "cpu", only: list[str] | None = None, params: dict | None = None,
          root: str | Path = REPO, site: bool = True, progress: bool | None = None, echo=print,
          jobs: int = 1, zoo_phase: bool = True) -> list[Chapter]:
    """Execute the book's notebooks (all, or ``only``) and build the site; one line per notebook, then a table.

    Args:
        profile: ``smoke``, ``cpu``, ``gpu`` or ``paper``.
        only: chapter names to execute (the others are reused or stubbed); default all of ``_toc.yml``.
        params: overrides for the notebooks' ``parameters`` cells, e.g. ``{"dataset": "cifar10"}``; each must
            be declared by at least one executed notebook.
        root: the book's folder (``_config.yml``, ``_toc.yml``, ``book/``, ``notebooks/``).
        site: run Jupyter Book after the notebooks.
        progress: a ticking seconds counter while a chapter runs (default: when stdout is a terminal).
        jobs: chapters executed at once, each in its own process on :func:`chapter_threads` threads, in the
            order of :func:`after` (see :func:`default_jobs` for what was measured); never more than the
            selected chapters. The numbers do not depend on it.
        zoo_phase: first train every zoo model the selected chapters load, ``jobs`` at once, longest first
            (:func:`invlib.zoo.train_phase`, one row of the summary); a chapter that still has to train one
            warns (:class:`invlib.zoo.ZooPhaseWarning`). False: chapters train what they load on first use.

    Example
    -------
    >>> chapters = build("smoke", only=["00_data_and_transforms"])   # doctest: +SKIP
    """
    root = Path(root).resolve()
    profile = check_choice(profile.name if isinstance(profile, Profile) else profile, PROFILES, "profile")
    names = toc_notebooks(root)
    selected = [check_choice(n, names, "chapter") for n in only] if only else names
    params = dict(params or {})
    if "profile" in params:
        raise ValueError("give the profile with --profile, not -p profile=...")
    declared = {n: notebook_parameters(read_notebook(n, root)) for n in selected}
    for key in params:
        if not any(key in d for d in declared.values()):
            valid = sorted({k for d in declared.values() for k in d} - {"profile"})
            raise ValueError(f"no selected notebook has a parameter {key!r}; their parameters: {', '.join(valid)}")
    for n in selected:
        check_overrides(n, declared[n], params)
    progress = sys.stdout.isatty() if progress is None else progress
    check_type("jobs", jobs, int)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    start, setup = time.perf_counter(), setup_seconds()
    phase = [_train_phase(selected, profile, params, declared, jobs, echo)] if zoo_phase else []
    jobs = min(jobs, len(selected))
    t0 = time.perf_counter()
    done = {}
    with mock.patch.dict(os.environ, {PHASE_ENV: "1"} if zoo_phase else {}):
        done = _execute(names, selected, profile, params, root, jobs, progress, echo)
    chapters = phase + [done[n] if n in done else _reuse_or_stub(n, root) for n in names]
    wall = time.perf_counter() - t0
    dress_chapters(chapters, root)
    write_scoreboard(chapters, root)
    if site:
        echo("jupyter-book build ...", end=" ", flush=True)
        seconds = build_site(root)
        echo(f"ok {seconds:.1f} s", flush=True)
        chapters.append(Chapter("(jupyter-book build)", "ok", seconds))
    echo(summary(chapters, root))
    if jobs > 1:
        echo(f"chapters: {wall:.1f} s of wall time with {jobs} at once")
    total = time.perf_counter() - start
    echo(f"book: {total:.1f} s of wall time (training phase, chapters{', site' * site})"
         + (f"; {total + setup:.1f} s with the set-up before it ({setup:.1f} s)" if setup is not None else ""))
    if set(selected) == set(names):  # a whole build: what benchmarks/bench_book.py reports against BOOK_BUDGET
        record = dict(profile=profile, wall=round(total, 1), setup=None if setup is None else round(setup, 1),
                      zoo_phase=round(phase[0].seconds, 1) if phase else None,
                      families=phase[0].families if phase else {},
                      chapters_wall=round(wall, 1), chapter_sum=round(sum(c.seconds for c in done.values()), 1),
                      jobs=jobs, threads=chapter_threads(), allocator=allocator_name(), site=site,
                      finished=time.strftime("%Y-%m-%d %H:%M:%S"))
        atomic_save(json.dumps(record, indent=2), build_record(profile, root))
    return chapters


def dress_chapters(chapters: list[Chapter], root: str | Path = REPO) -> None:
    """Make every executed chapter of the build read as a page (:func:`invlib.pages.dress`): its findings box,
    its code folded, its "Reproduce this chapter" section with its results to download
    (``book/_generated/downloads/<name>.json`` and its CSVs, :func:`invlib.pages.write_downloads`). A chapter kept
    from an earlier build (``--only``) is dressed anew from its results, so every page reads this build's plan."""
    import nbformat

    from . import pages, plan

    root = Path(root).resolve()
    folder = results_root(root)
    repository = site_config(root)["repository"]["url"] if (root / "_config.yml").exists() else ""
    need = {}
    for profile in sorted({c.profile for c in chapters if c.status != "stub" and c.profile in PROFILES}):
        try:
            need.update(plan.to_decide(plan.read_build(folder / profile)))
        except FileNotFoundError:  # no chapter of this profile has claims yet
            pass
    for ch in chapters:
        path = root / GENERATED / f"{ch.name}.ipynb"
        if ch.status == "stub" or ch.profile not in PROFILES or not path.exists():
            continue
        file = folder / ch.profile / f"{ch.name}.json"
        record = json.loads(file.read_text()) if file.exists() else None
        files = pages.write_downloads(ch.name, record, root / GENERATED / DOWNLOADS) if record else []
        nb = nbformat.read(path, as_version=4)
        pages.dress(nb, ch.name, record, need, repository, [(label, f"{DOWNLOADS}/{f}") for label, f in files])
        atomic_save(nbformat.writes(nb), path)


def build_record(profile: str, root: str | Path = REPO) -> Path:
    """Where a whole build writes its wall seconds: ``<results>/build-<profile>.json`` (beside, not inside, the
    chapters' folder, so the scoreboard and :func:`invlib.results.compare` never read it)."""
    return results_root(root) / f"build-{profile}.json"


def _execute(names, selected, profile, params, root, jobs, progress, echo) -> dict:
    """Execute the selected chapters, one after another in book order or ``jobs`` at once, their kernels forked
    from one server that imported the heavy libraries once (:func:`warm_kernels`); ``{name: Chapter}``."""
    with warm_kernels(root, len(selected)):
        return _execute_all(names, selected, profile, params, root, jobs, progress, echo)


WARM_ENV = "INVLIB_WARM"  # "0": every chapter's kernel starts cold (imports its libraries itself)


@contextlib.contextmanager
def warm_kernels(root: str | Path = REPO, chapters: int = 2):
    """Inside the block, chapters' kernels are forked from one server (:class:`invlib.kernels.Zygote`) that imported
    torch, torchvision, timm and kornia once, in the environment the kernels get (:func:`_kernel_env`: its threads
    and OpenMP wait policy, read when the libraries load): about 6 s of CPU saved per chapter, the same numbers.
    Nothing changes for one chapter (the server would import what the kernel imports), or where ``$INVLIB_WARM``
    is ``0``.

    Example
    -------
    >>> with warm_kernels(REPO, chapters=3):                          # doctest: +SKIP
    ...     execute("00_data_and_transforms", "smoke")
    """
    if chapters < 2 or os.environ.get(WARM_ENV) == "0":
        yield
        return
    with _kernel_env(Path(root), "(warm kernels)", chapter_threads()):
        env = dict(os.environ)
    with kernels.Zygote(env):
        yield


def _execute_all(names, selected, profile, params, root, jobs, progress, echo) -> dict:
    done = {}
    if jobs == 1:
        for i, name in enumerate(names, 1):
            if name in selected:
                line = f"[{i}/{len(names)}] {name} ({profile}) ..."
                echo(line, end=" ", flush=True)
                with _Ticker(line, enabled=progress):
                    done[name] = execute(name, profile, params, root)
                echo(f"ok {done[name].seconds:.1f} s", flush=True)
    else:
        done = _execute_parallel([n for n in names if n in selected], profile, params, root, jobs, echo)
    return done


ZOO_PHASE = "(zoo training phase)"  # the summary's row of the training phase


def _train_phase(selected: list[str], profile: str, params: dict, declared: dict, workers: int, echo) -> Chapter:
    """Train the zoo models the selected chapters load (:func:`invlib.papers.zoo_specs`), longest first, and the
    families the selected chapters train themselves (:func:`invlib.papers.train_family`, one job per chapter,
    first), in ``workers`` one-thread processes (:func:`invlib.zoo.train_phase`); its seconds as a row of the
    summary, with ``families``: ``{chapter: seconds}`` of the families' jobs."""
    from . import zoo

    given = {n: check_overrides(n, declared[n], params) for n in selected}
    specs = [s for n in selected for s in papers.zoo_specs(n, profile, given[n])]
    tasks = [(n, papers.train_family, (n, profile, given[n])) for n in selected if papers.facts(n).family]
    t0 = time.perf_counter()
    todo = len({zoo.path(s) for s in specs if not zoo.path(s).exists()})
    echo(f"{ZOO_PHASE}: {todo} of {len({zoo.path(s) for s in specs})} zoo models to train and {len(tasks)} "
         f"chapters' own families, {workers} at once ...", flush=True)
    rows = zoo.train_phase(specs, workers=workers, threads=chapter_threads(), echo=echo, tasks=tasks)
    seconds = time.perf_counter() - t0
    families = {r["name"]: round(r["seconds"], 1) for r in rows if r["seed"] is None}
    models = [r for r in rows if r["seed"] is not None]
    echo(f"{ZOO_PHASE}: {len(models)} models and {len(families)} families in {seconds:.1f} s of wall time "
         f"({sum(r['seconds'] for r in rows):.1f} s of process time)", flush=True)
    return Chapter(ZOO_PHASE, "ok", seconds, profile, families)


def default_jobs(profile: str) -> int:
    """Chapters to run at once by default: on the CPU profiles (smoke, cpu) one per :func:`chapter_threads` cores
    (2 on 2 cores, 8 on 8), so every core works and every chapter computes on the same threads; 1 for gpu and
    paper (chapters there share one GPU).

    One-thread chapters side by side beat one two-thread chapter at a time (``benchmarks/bench_threads.py``
    remeasures it; the numbers are in ``benchmarks/measurements/foundation.md``).

    Example
    -------
    >>> default_jobs("gpu")
    1
    """
    return max(1, (os.cpu_count() or 1) // chapter_threads()) if profile in ("smoke", "cpu") else 1


def _execute_parallel(names: list[str], profile: str, params: dict, root: Path, jobs: int, echo) -> dict:
    """Execute ``names`` ``jobs`` at a time, each in a fresh process on :func:`chapter_threads` threads; a chapter
    starts once the selected chapters it comes :func:`after` have finished. Returns ``{name: Chapter}``; the first
    failure cancels the chapters not yet started and is raised."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    threads = chapter_threads()
    pending, running, done = start_order(names), {}, {}
    position = {n: i for i, n in enumerate(toc_notebooks(root), 1)}
    order = after(list(position))
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        while pending or running:
            for name in list(pending):
                if len(running) < jobs and all(d in done or d not in names for d in order.get(name, ())):
                    pending.remove(name)
                    running[pool.submit(execute, name, profile, params, root, threads)] = name
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                name = running.pop(future)
                try:
                    done[name] = future.result()
                except Exception:
                    pool.shutdown(cancel_futures=True)
                    raise
                echo(f"[{position[name]}/{len(position)}] {name} ({profile}) ... ok {done[name].seconds:.1f} s "
                     f"({threads} thread{'s' * (threads > 1)})", flush=True)
    return done


def start_order(names: list[str]) -> list[str]:
    """The order in which a parallel build offers ``names`` to its workers: the chapters that train a model family
    in the chapter (:attr:`invlib.papers.ChapterFacts.trains` without a ``family`` that the training phase trains:
    the longest of a build whose phase has trained the rest) and every chapter another waits for (:func:`after`)
    first, then the rest; within each group the heads of the longest chains of chapters that wait for one another
    first (B3, then B4, then B5), then book order. A chapter still starts only after those it comes :func:`after`.
    Starting the long ones first leaves short ones, not a long one alone, at the end (eec49a3's cold cpu build: 1,705
    s of wall time for 3,316 s of chapters on 2 workers, 47 s more than an even split); starting a chain's head early
    keeps the chain from ending alone (40de14e's cold build: B3 started among the last, and B4 and B5, which wait for
    it, ran after it; its chapters' seconds replayed in this order end 26 s sooner, 11 s after an even split);
    starting what a chapter waits for early lets it start early (d3d43a5's cold build: S1, 75 s, waited for B7,
    offered 19th, and ended alone; its chapters' seconds replayed in this order end 20 s sooner, 562 s against
    582, 13 s after an even split).

    Example
    -------
    >>> start_order(["a1_ranking_tasks", "b1_rrc_decomposition", "b3_invariance_vs_magnitude",
    ...              "b6_augerino_real_data", "d2_instance_crops"])[:2]  # B6 reuses B1's predictions
    ['b1_rrc_decomposition', 'a1_ranking_tasks']
    >>> start_order(["00_data_and_transforms", "a2_which_layers", "b3_invariance_vs_magnitude",
    ...              "b4_factors_of_variation", "b5_wordnet"])  # B5 waits for B4, B4 for B3
    ['b3_invariance_vs_magnitude', 'b4_factors_of_variation', '00_data_and_transforms', 'a2_which_layers', 'b5_wordnet']
    """
    known = [n for n in names if n in papers.CHAPTERS]
    waits = after(known)
    early = {n for n in known if papers.facts(n).trains and not papers.facts(n).family}
    early |= {m for n in known for m in waits.get(n, ())}  # what any chapter waits for
    depth: dict[str, int] = {}
    for n in reversed(names):  # the longest chain of chapters from n on, n included (those after it come later)
        depth[n] = 1 + max((depth[m] for m in names if n in waits.get(m, ())), default=0)
    position = {n: i for i, n in enumerate(names)}
    return sorted(names, key=lambda n: (n not in early, -depth[n], position[n]))


def after(names: list[str]) -> dict[str, tuple[str, ...]]:
    """``{chapter: the chapters before it in names (book order) that write a cache it reads}``, from the facts
    declared in :data:`invlib.papers.CHAPTERS`: the order of a parallel build (zoo models need no entry: the
    training phase trains them all before any chapter starts). A chapter waits only for earlier ones, so the book
    order of a build with one job keeps it too.

    Example
    -------
    >>> after(["a1_ranking_tasks", "a2_which_layers", "c1_invariance_equivariance", "c2_representation_distance"])
    {'a2_which_layers': ('a1_ranking_tasks',), 'c2_representation_distance': ('c1_invariance_equivariance',)}
    """
    out = {}
    for i, name in enumerate(names):
        reads = set(papers.facts(name).reads)
        before = tuple(n for n in names[:i] if reads & set(papers.facts(n).writes))
        if before:
            out[name] = before
    return out


def trains_a_family(name: str, profile: str = "cpu") -> bool:
    """Whether chapter ``name`` trains a model family at ``profile``, and so has a family chapter's budget: it
    trains one itself (:attr:`invlib.papers.ChapterFacts.trains`), or it is the first chapter of the book to load
    one of its zoo models (which a build without the training phase trains there; a chapter whose models an
    earlier chapter loads only measures them).

    Example
    -------
    >>> trains_a_family("e3_capacity"), trains_a_family("a1_ranking_tasks"), trains_a_family("a2_which_layers")
    (True, True, False)
    """
    return papers.facts(name).trains or name in _first_loaders(profile)


@cache
def _first_loaders(profile: str) -> frozenset:
    """The chapters of :data:`invlib.papers.CHAPTERS` (book order) that load a zoo model no earlier one loads."""
    from . import zoo

    seen, first = set(), set()
    for name in papers.CHAPTERS:
        files = {zoo.path(s) for s in papers.zoo_specs(name, profile)}
        if files - seen:
            first.add(name)
        seen |= files
    return frozenset(first)


def budget(name: str, profile: str) -> float | None:
    """Seconds a chapter may take at a profile on 2 CPU cores: its own (:data:`invlib.papers.CHAPTERS`), else its
    class's in :data:`BUDGETS` (:func:`trains_a_family`); None where there is none.

    Example
    -------
    >>> budget("a2_which_layers", "cpu"), budget("e3_capacity", "cpu"), budget("a2_which_layers", "gpu")
    (120, 300, None)
    >>> budget("b1_rrc_decomposition", "cpu"), budget("d2_instance_crops", "cpu")
    (480, 300)
    """
    own = papers.facts(name).budgets.get(profile)
    if own is not None:
        return own
    limits = BUDGETS.get(profile)
    if limits is None:
        return None
    return limits[0] if limits[0] == limits[1] else limits[trains_a_family(name, profile)]


def summary(chapters: list[Chapter], root: str | Path = REPO) -> str:
    """The table printed at the end of a build: each chapter's seconds beside its budget (``over`` marks a
    chapter that took longer; on a slower or busier machine than 2 free cores that is expected)."""
    lines = [f"{'chapter':34s} {'status':8s} {'profile':8s} {'seconds':>8s} {'budget':>7s}"]
    for c in chapters:
        limit = budget(c.name, c.profile) if c.status == "ok" and c.name != ZOO_PHASE else None
        mark = "" if limit is None else f"{limit:7d}" + (" over" if c.seconds > limit else "")
        lines.append(f"{c.name:34s} {c.status:8s} {c.profile:8s} {c.seconds:8.1f} {mark}".rstrip())
    lines.append(f"{'total':34s} {'':8s} {'':8s} {sum(c.seconds for c in chapters):8.1f}")
    index = Path(root) / "_build" / "html" / "index.html"
    if any(c.name == "(jupyter-book build)" for c in chapters) and index.exists():
        lines.append(f"site: {index}")
    return "\n".join(lines)

