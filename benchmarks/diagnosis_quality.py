"""The misconception diagnosis measured as a classifier, on what it was tuned on and on what it was not
(a script, not a test).

    .venv/bin/python benchmarks/diagnosis_quality.py [--runs 3] [--seed N] [--part development|heldout|fresh|both] [--smoke]

Grades every case of each part of the labelled corpus in-process, once per run, each run as a fresh
student (a new student id, so new random inputs and new probes): the development part
(tests/fixtures/diagnosis/, what the diagnosis may be tuned on) and the held-out part
(tests/fixtures/diagnosis_heldout/, written blind to the catalogue's variants and the diagnosis code);
``--part fresh``: the fresh class (tests/fixtures/diagnosis_fresh/, 126 cases written blind to the diagnosis,
its checks and the other corpora, for one final measurement; "both" leaves it out).
For each part it prints, per misconception id (a compound's parts count for each id): precision (of
the cases it was named in, those that wrote it), named recall and localised recall (named, or a stage
localised without a wrong name) over the cases labelled with it; a table per label group; and overall
precision, named recall (over the cases labelled with an id), localised recall (over every mistake),
wrong full marks (a mistake that kept every point) and correct code that lost a point or was
diagnosed. Then the points earned by the do-nothing code of the implementation corpus
(tests/fixtures/impl/nothing_*.py: random, echo, identity, uniform, zeros, where present).

Cases that write a fair score per cell (``FAIR = {grade_id: points}``, partial implementations) are graded
against it: the mean and worst distance, and every cell more than 1 point off.

Targets on the held-out part: precision 1.0, named recall >= 0.95, localised recall >= 0.95, no
wrong full marks, correct code always full marks, partial credit within 1 point of every fair score; do-nothing
code at most the shape points. Exits 1 when precision, wrong full marks, correct code or partial credit miss
their target on either part.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "helpers")]

from diagnosis_corpus import PARTS, cases, score  # noqa: E402

SHAPE_CHECKS = ("shapes", "shape_and_dtype")      # what do-nothing code may earn: these checks' points
CELL_FUNCTIONS = {"ex1_softmax": ("softmax",), "ex1_attention": ("scaled_dot_product_attention",),
                  "ex2_mask": ("causal_mask",), "ex2_causal": ("causal_attention",),
                  "ex3_memory": ("attention_memory_bytes", "ffn_memory_bytes"), "ex3_crossover": ("crossover_length",),
                  "ex4_cross": ("cross_attention",)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh students (seeds) to grade the corpus as")
    parser.add_argument("--seed", help="a fixed student id prefix instead of a fresh random one")
    parser.add_argument("--part", choices=(*PARTS, "both"), default="both")
    parser.add_argument("--smoke", action="store_true", help="three cases of each part, one student, no verdict: "
                        "does the script run (tests/house/test_benchmarks.py)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs = 1
    prefix = args.seed or secrets.token_hex(4)
    students = [f"bench-{prefix}-{i}" for i in range(args.runs)]
    ok = True
    for part in ("development", "heldout") if args.part == "both" else (args.part,):
        ok &= _report(part, students, 3 if args.smoke else None)
    _do_nothing(students[0])
    return 0 if ok or args.smoke else 1


def _report(part: str, students: list[str], first: int | None = None) -> bool:
    corpus = cases(part)[:first]
    if not corpus:
        print(f"== {part}: no cases (tests/fixtures/{PARTS[part]}/ is not there)\n")
        return True
    started = time.perf_counter()
    scores = score(students, corpus)
    seconds = time.perf_counter() - started
    print(f"== {part} part: {len(corpus)} cases x {len(students)} fresh students ({', '.join(students)}), "
          f"{seconds:.1f} s ({1000 * seconds / len(scores.verdicts):.0f} ms a case)\n")
    print(f"{'misconception id':<24} {'named':>6} {'right':>6} {'precision':>9} {'labelled':>8} {'named rec':>9} "
          f"{'localised rec':>13}")
    for mid, (named, right, labelled, found) in scores.per_id().items():
        precision = f"{right / named:.3f}" if named else "-"
        recall = f"{right / labelled:.3f}" if labelled else "-"
        localised = f"{found / labelled:.3f}" if labelled else "-"
        print(f"{mid:<24} {named:>6} {right:>6} {precision:>9} {labelled:>8} {recall:>9} {localised:>13}")
    print(f"\n{'label group':<24} {'cases':>6} {'named':>6} {'localised':>9} {'misnamed':>8} {'as labelled':>11}")
    for group, row in sorted(scores.per_group().items()):
        print(f"{group:<24} {row['cases']:>6} {row['named']:>6} {row['localised']:>9} {row['misnamed']:>8} "
              f"{row['as labelled']:>11}")
    wrong = [v for v in scores.verdicts if v.wrong_names]
    dirty = [v for v in scores.verdicts if v.case.expected == "correct" and not v.right]
    kept = scores.wrong_full_marks()
    for v in wrong + dirty:
        print(f"  NOT AS LABELLED: {v.case.name} (expected {v.case.expected}): named {sorted(v.names)}, "
              f"full marks {v.full_marks}")
    for v in kept:
        print(f"  WRONG FULL MARKS: {v.case.name} (expected {v.case.expected}), as student {v.student}")
    for v in scores.mistakes:
        if not (v.named or v.localised):
            why = "no check failed" if not v.failed else f"{v.failed} checks failed, named {sorted(v.names) or 'nothing'}"
            print(f"  missed (neither named nor localised): {v.case.name} (expected {v.case.expected}), "
                  f"as student {v.student}: {why}")
        elif not v.named and v.case.expected not in ("localised",):
            print(f"  localised, not named: {v.case.name} (expected {v.case.expected}), as student {v.student}")
    precision = scores.precision()
    print(f"\n{part}: precision {precision:.3f}, named recall {scores.named_recall():.3f}, localised recall "
          f"{scores.localised_recall():.3f}, wrong full marks {len(kept)}, correct code not clean {len(dirty)}")
    far = _partial_credit(corpus, students)
    print()
    return precision == 1.0 and not kept and not dirty and not far


def _partial_credit(corpus, students) -> list:
    """Each case with a written fair score per cell (``FAIR = {grade_id: points}``): how far its cells are from it,
    under each student; the cells more than 1 point off."""
    import autograder
    gaps, far = [], []
    for case in corpus:
        fair = getattr(importlib.import_module(case.module), "FAIR", None)
        for student in students if fair else ():
            cells = autograder.grade_namespace(case.namespace(), student).cells
            for grade_id, points in fair.items():
                gaps.append(abs(cells[grade_id].earned - points))
                if gaps[-1] > 1:
                    far.append((case.name, student, grade_id, cells[grade_id].earned, points))
    if gaps:
        print(f"partial credit: {len(gaps)} cells with a written fair score, |score - fair| mean {sum(gaps) / len(gaps):.2f}, "
              f"worst {max(gaps):g}, more than 1 point off: {len(far)}")
    for name, student, grade_id, got, points in far:
        print(f"  PARTIAL CREDIT OFF: {name} {grade_id}: {got:g} against a fair {points:g}, as student {student}")
    return far


def _do_nothing(student: str) -> None:
    """The points each do-nothing implementation (tests/fixtures/impl/nothing_*.py) earns in the grade cells of
    the functions it writes itself (the rest are the right ones), against the shape checks' points there."""
    import autograder
    from fixtures import impl
    names = sorted(m.name for m in pkgutil.iter_modules(impl.__path__) if m.name.startswith("nothing_"))
    print("== do-nothing code: points in the cells of the functions it writes (at most the shape checks')")
    for name in names:
        mod = importlib.import_module(f"fixtures.impl.{name}")
        namespace = {k: v for k, v in vars(mod).items() if callable(v) and not k.startswith("_")}
        own = {k for k, v in namespace.items() if getattr(v, "__module__", None) == mod.__name__}
        record = autograder.grade_namespace(namespace, student)
        checks = [c for c in record.checks if set(CELL_FUNCTIONS[c.grade_id]) & own]
        earned = sum(c.points for c in checks)
        shapes = sum(c.points for c in checks if c.check in SHAPE_CHECKS)
        mark = "" if earned <= shapes else "  MORE THAN THE SHAPE POINTS"
        print(f"  {name:<40} {earned:g}/{sum(c.max_points for c in checks):g} in its cells, of which shapes "
              f"{shapes:g}{mark}")


if __name__ == "__main__":
    sys.exit(main())
