"""Thin command line: parse arguments, call the API (``python -m autograder --help``)."""
from __future__ import annotations

import argparse
import sys


def _demo(args) -> int:
    from solutions.tour import tour
    print(tour())
    return 0


def _release(args) -> int:
    from pathlib import Path

    from .release import generate_release
    print(f"wrote {generate_release(Path(args.course), assignment=args.assignment)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the README's main job")
    demo.set_defaults(func=_demo)
    release = sub.add_parser("release", help="generate release/ from source/ with nbgrader")
    release.add_argument("--course", default=".")
    release.add_argument("--assignment", default="ch04_attention")
    release.set_defaults(func=_release)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
