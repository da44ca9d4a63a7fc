"""The misconception diagnosis measured as a classifier (a script, not a test).

    .venv/bin/python benchmarks/diagnosis_quality.py [--runs 3] [--seed N]

Grades every case of the labelled corpus (tests/fixtures/diagnosis/) in-process, once per run, each
run as a fresh student (a new student id, so new random inputs and new probes), and prints:
precision and recall per misconception id (a compound's parts count for each id), a table per
label group (single ids, compounds, triples, uncatalogued 'localised', 'unnamed', 'correct'), and
overall precision (the share of names given that name only what the student wrote), named recall
and named-or-localised recall over the mistakes. Targets: precision 1.0 on any seed, named-or-
localised recall >= 0.95, correct code never diagnosed. Exits 1 when a target is missed.
"""
from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from diagnosis_corpus import cases, score  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh students (seeds) to grade the corpus as")
    parser.add_argument("--seed", help="a fixed student id prefix instead of a fresh random one")
    args = parser.parse_args(argv)
    prefix = args.seed or secrets.token_hex(4)
    students = [f"bench-{prefix}-{i}" for i in range(args.runs)]
    corpus = cases()
    started = time.perf_counter()
    scores = score(students, corpus)
    seconds = time.perf_counter() - started
    print(f"corpus: {len(corpus)} cases x {len(students)} fresh students ({', '.join(students)}), "
          f"{seconds:.1f} s ({1000 * seconds / len(scores.verdicts):.0f} ms a case)\n")
    print(f"{'misconception id':<24} {'named':>6} {'right':>6} {'precision':>9} {'labelled':>8} {'recall':>7}")
    for mid, (named, right, labelled) in scores.per_id().items():
        precision = f"{right / named:.3f}" if named else "-"
        recall = f"{right / labelled:.3f}" if labelled else "-"
        print(f"{mid:<24} {named:>6} {right:>6} {precision:>9} {labelled:>8} {recall:>7}")
    print(f"\n{'label group':<24} {'cases':>6} {'named':>6} {'localised':>9} {'misnamed':>8} {'as labelled':>11}")
    for group, row in sorted(scores.per_group().items()):
        print(f"{group:<24} {row['cases']:>6} {row['named']:>6} {row['localised']:>9} {row['misnamed']:>8} "
              f"{row['as labelled']:>11}")
    wrong = [v for v in scores.verdicts if v.wrong_names]
    dirty = [v for v in scores.verdicts if v.case.expected == "correct" and not v.right]
    for v in wrong + dirty:
        print(f"  NOT AS LABELLED: {v.case.name} (expected {v.case.expected}): named {sorted(v.names)}")
    for v in scores.mistakes:
        if not (v.named or v.localised):
            why = "no check failed" if not v.failed else f"{v.failed} checks failed"
            print(f"  missed (neither named nor localised): {v.case.name} (expected {v.case.expected}), "
                  f"as student {v.student}: {why}")
    precision, recall, named = scores.precision(), scores.recall(), scores.recall(localised_counts=False)
    print(f"\noverall: precision {precision:.3f}, named recall {named:.3f}, named-or-localised recall "
          f"{recall:.3f}, correct code diagnosed {len(dirty)} times")
    return 0 if precision == 1.0 and recall >= 0.95 and not dirty else 1


if __name__ == "__main__":
    sys.exit(main())
