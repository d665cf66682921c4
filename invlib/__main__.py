"""Command line.

``python -m invlib book --profile cpu [--only NAME ...] [-p key=value ...]``  execute the notebooks, build the site
``python -m invlib zoo train|list --profile cpu``                            the cached model zoo
``python -m invlib data check``                                              offline datasets and WordNet
"""

from __future__ import annotations

import argparse
import sys

from .profiles import PROFILES


def _zoo(args) -> int:
    from . import zoo

    if args.action == "list":
        for name in zoo.available():
            file = zoo.path(name, args.profile)
            print(f"{name:28s} {'cached ' if file.exists() else 'missing'} {file}")
        return 0
    rows = zoo.train_all(args.profile, args.only or None, progress=not args.quiet)
    print(f"\n{'entry':28s} {'test acc':>9s} {'seconds':>8s}  source")
    for r in rows:
        print(f"{r['name']:28s} {r['test_acc']:9.4f} {r['seconds']:8.1f}  {'cache' if r['cached'] else 'trained'}")
    print(f"{'total':28s} {'':9s} {sum(r['seconds'] for r in rows):8.1f}")
    return 0


def _data(args) -> int:
    from . import data

    report = data.check()
    return 0 if all(v.get("ok", True) for v in report.values() if isinstance(v, dict)) else 1


def _book(args) -> int:
    from . import book

    if args.list:
        for name in book.toc_notebooks():
            params = book.notebook_parameters(book.read_notebook(name))
            print(f"{name}\n    " + "\n    ".join(f"{k} = {v!r}" for k, v in params.items()))
        return 0
    try:
        book.build(args.profile, only=args.only, params=book.parse_overrides(args.param), site=not args.no_site)
    except (book.NotebookError, book.BuildError) as err:
        print(f"\nerror: {err}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m invlib`` (and the ``invlib`` console script)."""
    parser = argparse.ArgumentParser(prog="python -m invlib", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_zoo = sub.add_parser("zoo", help="train or list the cached model zoo")
    p_zoo.add_argument("action", choices=["train", "list"])
    p_zoo.add_argument("--profile", default="cpu", choices=sorted(PROFILES))
    p_zoo.add_argument("--only", nargs="*", metavar="NAME", help="zoo entries (default: all)")
    p_zoo.add_argument("--quiet", action="store_true", help="no progress bars")
    p_zoo.set_defaults(func=_zoo)
    p_book = sub.add_parser("book", help="execute the notebooks with papermill and build the site")
    p_book.add_argument("--profile", default="cpu", choices=sorted(PROFILES))
    p_book.add_argument("--only", nargs="+", metavar="NAME", help="notebooks to execute (default: all in _toc.yml)")
    p_book.add_argument("-p", "--param", action="append", metavar="KEY=VALUE",
                        help="notebook parameter override, e.g. -p dataset=cifar10 (repeatable)")
    p_book.add_argument("--no-site", action="store_true", help="execute the notebooks but skip jupyter-book")
    p_book.add_argument("--list", action="store_true", help="list the chapters and their parameters, run nothing")
    p_book.set_defaults(func=_book)
    p_data = sub.add_parser("data", help="check the offline datasets and WordNet")
    p_data.add_argument("action", choices=["check"])
    p_data.set_defaults(func=_data)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, FileNotFoundError) as err:  # a user error or missing data: message only
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
