"""Command line.

``python -m invlib book --profile cpu [--only NAME ...] [-p key=value ...]``  execute the notebooks, build the site
``python -m invlib zoo train|list --profile cpu [--executor slurm|local ...]``  the cached model zoo
``python -m invlib family b.rrc --profile paper [-p key=value ...]``          train a paper's family (torchrun)
``python -m invlib data check``                                              offline datasets and WordNet
``python -m invlib plan --profile cpu [--budget S | --img-s N] [--out FILE]``  the replicates that decide the claims
``python -m invlib measure MODEL --data FOLDER [-p key=value ...]``           every paper's measure of your model
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .profiles import PROFILES
from .utils import REPO

ZOO_HELP = """Train or list zoo models (invlib.zoo). Examples:
  python -m invlib zoo train --profile cpu                           # the book's models, here
  python -m invlib zoo train --profile gpu --all --seeds 0 1 2 --executor slurm --partition gpu --timeout-min 60
  python -m invlib zoo train --profile smoke --executor local        # one local process per model
  python -m invlib zoo list --profile gpu --dataset folder --root my_images"""


def _zoo(args) -> int:
    from . import zoo
    from .profiles import get_profile

    prof = get_profile(args.profile).replace(**{k: v for k, v in (("dataset", args.dataset),) if v})
    names = zoo.available() if args.all else args.only or list(zoo.BOOK)
    specs = [zoo.spec(name, prof, args.root, seed=seed) for name in names for seed in args.seeds or [0]]
    if args.action == "list":
        for s in specs:
            file = zoo.path(s)
            book = "book" if s.name in zoo.BOOK else "    "
            print(f"{s.name:26s} seed {s.seed:<3d} {book} {'cached ' if file.exists() else 'missing'} {file}")
        return 0
    executor = None
    if args.executor != "none":
        extra = dict(kv.split("=", 1) for kv in args.slurm or [])
        params = dict(timeout_min=args.timeout_min, gpus_per_node=args.gpus if args.gpus is not None else
                      int(prof.device != "cpu"), cpus_per_task=args.cpus, slurm_array_parallelism=args.parallel,
                      **({"slurm_partition": args.partition} if args.partition else {}),
                      **({"mem_gb": args.mem_gb} if args.mem_gb else {}),
                      **{k: int(v) if v.isdigit() else v for k, v in extra.items()})
        try:
            executor = zoo.executor(args.executor, args.folder, **params)
        except RuntimeError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"submitting to {args.executor} (logs in {executor.folder}): {params}")
    t0 = time.perf_counter()
    models = zoo.train_many(specs, executor, progress=not args.quiet)
    print(f"\n{'entry':26s} {'seed':>4s} {'test acc':>9s} {'trained in':>10s}  checkpoint")
    for s, m in zip(specs, models):
        info = m.zoo_info
        print(f"{s.name:26s} {s.seed:4d} {zoo.test_accuracy(s, model=m):9.4f} {info['seconds']:9.1f}s  {info['path']}")
    print(f"{'this call':26s} {'':4s} {'':9s} {time.perf_counter() - t0:9.1f}s")
    return 0


FAMILY_HELP = """Train (or load) the model family of a paper's method module into the zoo, so that its chapters then
only measure. Under torchrun every model trains with DDP across the processes (gloo on CPU, nccl on CUDA).
Modules with a family: b.rrc (chapters B1, B2, B6), c.equivariance (C1-C3). Examples:
  torchrun --nproc_per_node=8 -m invlib family b.rrc --profile paper -p root=/data/imagenet
  python -m invlib family c.equivariance --profile gpu -p dataset=folder -p root=my_images
  python -m invlib family b.rrc --profile paper -p root=/data/imagenet -p executor=slurm   # a SLURM job a model"""
FAMILY_MODULES = ("b.rrc", "c.equivariance")  # invlib.papers.<name> with settings() and family_models()


def _family(args) -> int:
    import importlib

    from . import book
    from .train import world_rank

    t0 = time.perf_counter()
    module = importlib.import_module(f"invlib.papers.{args.module}")  # by name: the foundation imports no paper
    trained = module.family_models(module.settings(args.profile, **book.parse_overrides(args.param)))
    if world_rank()[0] == 0:
        for m in trained:
            info = m.zoo_info
            print(f"{info['name']:40s} seed {info['spec']['seed']:<3d} trained in {info['seconds']:.0f} s  "
                  f"{info['path']}")
        print(f"{len(trained)} models of {args.module} in {time.perf_counter() - t0:.1f} s")
    return 0


def _data(args) -> int:
    from . import data

    report = data.check(load=args.load)
    return 0 if all(v.get("ok", True) for v in report.values() if isinstance(v, dict)) else 1


def _book(args) -> int:
    from . import book

    if args.list:
        for name in book.toc_notebooks(args.book_dir):
            params = book.notebook_parameters(book.read_notebook(name, args.book_dir))
            print(f"{name}\n    " + "\n    ".join(f"{k} = {v!r}" for k, v in params.items()))
        return 0
    try:
        book.build(args.profile, only=args.only, params=book.parse_overrides(args.param), root=args.book_dir,
                   site=not args.no_site, jobs=args.jobs or book.default_jobs(args.profile))
    except (book.NotebookError, book.BuildError) as err:
        print(f"\nerror: {err}", file=sys.stderr)
        return 1
    return 0


def _compare(args) -> int:
    from . import results

    rows = results.compare(args.a, args.b)
    chapters = {}
    for r in rows:
        chapters.setdefault(r["chapter"], r["same_json"])
        if r["id"] is not None:
            mark = ("  MOVED" if r["moved"] else "") + ("  DECLARATION CHANGED" if r["declaration_moved"] else "")
            print(f"{r['chapter']:34s} {r['id']:48s} {r['verdict_a']!s:28s} {r['verdict_b']!s:28s}{mark}")
    same = [c for c, ok in chapters.items() if ok]
    moved = sum(r["moved"] for r in rows if r["id"] is not None)
    print(f"\n{len(same)} of {len(chapters)} chapters wrote the same JSON (apart from {', '.join(results.VOLATILE)});"
          f" {moved} of {sum(r['id'] is not None for r in rows)} verdicts moved")
    declared = [f"{r['chapter']} {r['id']}" for r in rows if r["id"] is not None and r["declaration_moved"]]
    print(f"{len(declared)} claims declared differently" + (":" if declared else ""))
    for name in declared:
        print(f"  declaration changed: {name}")
    for c, ok in chapters.items():
        if not ok:
            print(f"  differs: {c}")
    return 0 if moved == 0 and len(same) == len(chapters) else 1


def _plan(args) -> int:
    import subprocess

    from . import plan
    from .chapters import results_root

    folder = Path(args.results) if args.results else results_root() / args.profile
    runs = plan.read_build(folder)
    record = plan.build_record(folder)
    budget = args.budget if args.budget is not None else plan.default_budget(folder, runs, img_s=args.img_s,
                                                                             setup=args.setup)
    wall, setup = plan.build_wall(record, args.setup) if record else (0.0, None)
    if budget is None:
        raise ValueError(f"no whole build recorded beside {folder} (build-{args.profile}.json): give --budget SECONDS")
    p = plan.make_plan(runs, budget, power=args.power, floor=args.floor)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    text = plan.markdown(p, source=f"From the build in `{folder}` (commit {commit} when planned); power "
                                   f"{args.power:.0%}; `python -m invlib plan` wrote it.",
                         reach=plan.reach(runs, args.power), img_s=args.img_s, setup=setup,
                         frontier_rows=plan.frontier(runs, wall, args.img_s, args.power) if record else None)
    if args.out:
        Path(args.out).write_text(text)
        print(f"plan: {args.out}")
    else:
        print(text)
    return 0


MEASURE_HELP = """Every paper's measure of invariance of your model on your images, layer by layer, with 95 % intervals
over the images and the book's models beside it: runs chapter y1_your_model through the book's runner (as
`python -m invlib book --only y1_your_model -p model=... -p data=...` does) and writes a page a browser opens, the
CSV tables and the JSON. The book's models it needs are trained first, as the book trains them; the chapter then
runs on every core ($INVLIB_THREADS to choose). MODEL: zoo:<entry>, a timm or tv/ hub name (online only),
<name>@<weights file>, random:<name>, <file.py>:<function> (a function returning a torch.nn.Module) or book:<name>
(the book's models: book:B1/none, book:B1/rrc, book:B1/translation, book:B1/scale, book:B3/resnet, book:B3/vit).
Examples:
  python -m invlib measure resnet18@my_weights.pt --data my_images
  python -m invlib measure my_nets.py:build --data my_images -p side=64 -p layers=layer2,pre_logits
  python -m invlib measure zoo:small_resnet18/standard --data scenes --profile smoke"""
MEASURE_CHAPTER = "y1_your_model"


def _local(text: str) -> str:
    """A file or folder in a model spec or a data name, made absolute where it exists here (the chapter runs in the
    repository's folder, not this one)."""
    if Path(text).exists():
        return str(Path(text).resolve())
    name, at, path = text.partition("@")
    if at and Path(path).exists():
        return f"{name}@{Path(path).resolve()}"
    path, colon, function = text.rpartition(":")
    if colon and path.endswith(".py") and Path(path).exists():
        return f"{Path(path).resolve()}:{function}"
    return text


def _measure(args) -> int:
    import importlib

    from . import book
    from .chapters import GENERATED, results_root

    yours = importlib.import_module("invlib.papers.s.yours")  # by name: the foundation imports no paper
    reports = importlib.import_module("invlib.papers.s.yours_reports")
    params = dict(book.parse_overrides(args.param), model=_local(args.model), data=_local(args.data))
    root = Path(args.book_dir)
    declared = book.notebook_parameters(book.read_notebook(MEASURE_CHAPTER, root))
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise ValueError(f"{MEASURE_CHAPTER} has no parameter {', '.join(unknown)}; its parameters: "
                         f"{', '.join(k for k in declared if k != 'profile')}")
    try:  # every input checked here, so a fault reads as one line, not a notebook's traceback
        found = yours.check(yours.settings(args.profile, **params))
    except RuntimeError as err:  # a hub name offline, weights that do not fit (invlib.models' errors)
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{found['model']}: {found['images']} images, {found['classes']} classes, {found['side']} px, layers "
          f"{', '.join(found['layers'])}; accuracies {found['accuracy'] or 'measured'}")
    # the book's models it is compared with, trained as the book trains them (one-thread processes), then the
    # chapter alone on every core (a measure, no training of models: it is not run beside another chapter here)
    book._train_phase([MEASURE_CHAPTER], args.profile, params, {MEASURE_CHAPTER: declared},
                      book.default_jobs(args.profile), print)
    threads = book.chapter_threads() if book.THREADS_ENV in os.environ else os.cpu_count() or 1
    try:
        chapter = book.execute(MEASURE_CHAPTER, args.profile, params, root=root, threads=threads)
    except book.NotebookError as err:
        print(f"\nerror: {err}", file=sys.stderr)
        return 1
    folder, notebook = results_root(root) / args.profile, root / GENERATED / f"{MEASURE_CHAPTER}.ipynb"
    page = reports.write_page(notebook, folder / f"{MEASURE_CHAPTER}.html")
    print(f"measured in {chapter.seconds:.1f} s on {threads} CPU thread{'s' * (threads > 1)}")
    print(f"page: {page}")
    print(f"json: {folder / MEASURE_CHAPTER}.json")
    print(f"csv:  {folder / MEASURE_CHAPTER}.csv (every number) and {MEASURE_CHAPTER}_<measure>.csv (the tables)")
    print(f"notebook: {notebook}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m invlib`` (and the ``invlib`` console script)."""
    parser = argparse.ArgumentParser(prog="python -m invlib", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_zoo = sub.add_parser("zoo", help="train or list the cached model zoo (in-process, local jobs or SLURM)",
                           description=ZOO_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p_zoo.add_argument("action", choices=["train", "list"])
    p_zoo.add_argument("--profile", default="cpu", choices=sorted(PROFILES))
    p_zoo.add_argument("--only", nargs="+", metavar="NAME", help="zoo entries (default: the book's, zoo.BOOK)")
    p_zoo.add_argument("--all", action="store_true", help="every entry of zoo.available()")
    p_zoo.add_argument("--seeds", nargs="+", type=int, metavar="S", help="one model per seed (default: 0)")
    p_zoo.add_argument("--dataset", help="dataset (default: the profile's), e.g. cifar10 or folder")
    p_zoo.add_argument("--root", help="folder of the dataset (your own images: <root>/<class>/<image>)")
    p_zoo.add_argument("--executor", default="none", choices=["none", "local", "slurm"],
                       help="none: train here, one after another; local/slurm: one submitit job per missing model")
    p_zoo.add_argument("--partition", help="SLURM partition")
    p_zoo.add_argument("--timeout-min", type=int, default=120, help="job time limit in minutes (default 120)")
    p_zoo.add_argument("--gpus", type=int, help="GPUs per job (default: 1 on gpu/paper profiles, else 0)")
    p_zoo.add_argument("--cpus", type=int, default=8, help="CPUs per job (default 8)")
    p_zoo.add_argument("--mem-gb", type=int, help="memory per job")
    p_zoo.add_argument("--parallel", type=int, default=16, help="SLURM jobs running at once (default 16)")
    p_zoo.add_argument("--folder", help="submitit logs (default: <cache>/submitit)")
    p_zoo.add_argument("--slurm", action="append", metavar="KEY=VALUE",
                       help="any other submitit parameter, e.g. --slurm slurm_account=abc (repeatable)")
    p_zoo.add_argument("--quiet", action="store_true", help="no progress bars")
    p_zoo.set_defaults(func=_zoo)
    p_book = sub.add_parser("book", help="execute the notebooks with papermill and build the site")
    p_book.add_argument("--profile", default="cpu", choices=sorted(PROFILES))
    p_book.add_argument("--only", nargs="+", metavar="NAME", help="notebooks to execute (default: all in _toc.yml)")
    p_book.add_argument("-p", "--param", action="append", metavar="KEY=VALUE",
                        help="notebook parameter override, e.g. -p dataset=cifar10 (repeatable)")
    p_book.add_argument("--no-site", action="store_true", help="execute the notebooks but skip jupyter-book")
    p_book.add_argument("--jobs", type=int, help="chapters run at once, each on INVLIB_THREADS threads (1); default: "
                        "cpu_count/threads on smoke/cpu, else 1. The numbers do not depend on it (see "
                        "invlib.book.default_jobs)")
    p_book.add_argument("--list", action="store_true", help="list the chapters and their parameters, run nothing")
    p_book.add_argument("--book-dir", default=str(REPO), metavar="DIR",
                        help="the book's folder: _config.yml, _toc.yml, book/, notebooks/ (default: this repository;"
                             " not a dataset folder, which is -p root=...)")
    p_book.set_defaults(func=_book)
    p_family = sub.add_parser("family", help="train a paper's model family into the zoo (torchrun, SLURM)",
                              description=FAMILY_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p_family.add_argument("module", choices=FAMILY_MODULES, help="the paper's method module (invlib.papers.<module>)")
    p_family.add_argument("--profile", default="cpu", choices=sorted(PROFILES))
    p_family.add_argument("-p", "--param", action="append", metavar="KEY=VALUE",
                          help="a setting of the chapter, as its notebook parameter, e.g. -p epochs=1 (repeatable)")
    p_family.set_defaults(func=_family)
    p_data = sub.add_parser("data", help="check the offline datasets and WordNet")
    p_data.add_argument("action", choices=["check"])
    p_data.add_argument("--load", action="store_true", help="load WordNet through NLTK, not only check that its "
                        "folder built from the Debian files is complete")
    p_data.set_defaults(func=_data)
    p_compare = sub.add_parser("compare", help="two builds' results side by side: same JSON? verdicts moved?",
                               description="Compare two results folders (results/<profile>/ of two builds of one "
                                           "commit): exit 0 when every chapter wrote the same JSON, apart from when "
                                           "and how long it ran, and no verdict moved.")
    p_compare.add_argument("a", help="a results folder, e.g. results/cpu")
    p_compare.add_argument("b", help="another, e.g. ../other-clone/results/cpu")
    p_compare.set_defaults(func=_compare)
    p_plan = sub.add_parser("plan", help="the replicates that decide each claim, their cost, and a budget's best use",
                            description=__import__("invlib.plan", fromlist=["x"]).__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p_plan.add_argument("--profile", default="cpu", choices=sorted(PROFILES))
    p_plan.add_argument("--results", metavar="DIR", help="a build's results folder (default: results/<profile>)")
    p_plan.add_argument("--budget", type=float, metavar="SECONDS",
                        help="seconds of replicates to spend (default: what the last whole build spent plus 2 cores"
                             " x the seconds it left below 40 minutes, minus them where it ran over)")
    p_plan.add_argument("--img-s", type=float, metavar="IMG_S",
                        help="the bare loop's images/s measured beside the build (benchmarks/bench_train.py): the 40 "
                             "minutes are at 900 img/s, so a slower machine has more seconds (default: none given, "
                             "the build's seconds taken as they are)")
    p_plan.add_argument("--setup", type=float, metavar="SECONDS",
                        help="the build's set-up before the runner, for a record without it (`make book` records "
                             "it): the 40 minutes include it")
    p_plan.add_argument("--power", type=float, default=0.8, help="the share of reruns a plan's n decides (0.8)")
    p_plan.add_argument("--floor", default="run", choices=("run", "n_min", "keep"),
                        help="each family's least n: the n it ran (default), its claims' n_min, or the fewest that "
                             "keep each claim decided now at an 80%% chance (keep); fewer replicates than were run "
                             "planned as fresh ones (a budget below what the build spent)")
    p_plan.add_argument("--out", metavar="FILE", help="write the Markdown table here (default: print it)")
    p_plan.set_defaults(func=_plan)
    p_measure = sub.add_parser("measure", help="every paper's measure of your model on your images (chapter Y1)",
                               description=MEASURE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p_measure.add_argument("model", help="the model: zoo:<entry>, <name>@<weights>, random:<name>, <file.py>:<fn>, "
                                         "a hub name or book:<name>")
    p_measure.add_argument("--data", default="scenes", help="a folder of images <root>/<class>/<image>, or scenes "
                                                            "(the default) or another dataset's name")
    p_measure.add_argument("--profile", default="cpu", choices=sorted(PROFILES))
    p_measure.add_argument("-p", "--param", action="append", metavar="KEY=VALUE",
                           help="a parameter of the chapter, e.g. -p side=64 -p layers=layer2,pre_logits -p "
                                "n_images=512 (repeatable)")
    p_measure.add_argument("--book-dir", default=str(REPO), metavar="DIR",
                           help="the book's folder, whose notebooks/ holds the chapter (default: this repository)")
    p_measure.set_defaults(func=_measure)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, FileNotFoundError) as err:  # a user error or missing data: message only
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
