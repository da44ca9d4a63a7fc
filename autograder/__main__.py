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


def _check(args) -> int:
    import json

    from .hardened import grade_submission
    from .textreport import check_table
    record = grade_submission(args.path, course=args.course, student_id=args.student)
    print(json.dumps(record, indent=1) if args.json else check_table(record))
    return 0


def _doctor(args) -> int:
    from .sandbox.layers import detect
    from .textreport import doctor_table
    print(doctor_table(detect()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the README's main job")
    demo.set_defaults(func=_demo)
    check = sub.add_parser("check", help="grade one submission (a folder or a notebook) in the sandbox")
    check.add_argument("path")
    check.add_argument("--json", action="store_true", help="print the result record as JSON")
    check.add_argument("--course", default=None, help="course folder (default: found above PATH)")
    check.add_argument("--student", default=None, help="student id (default: from the nbgrader layout)")
    check.set_defaults(func=_check)
    doctor = sub.add_parser("doctor", help="list the isolation layers this machine provides")
    doctor.set_defaults(func=_doctor)
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
