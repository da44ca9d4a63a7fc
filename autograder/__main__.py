"""Thin command line: parse arguments, call the API (``python -m autograder --help``).

Each command imports what it runs inside its own function: numpy, nbgrader, the LMS's HTTP and crypto load
only for the command that uses them, so ``--help`` and a mistyped option answer at once.
"""
from __future__ import annotations

import argparse
import sys

from .inert import one_line, shown, terminal
from .lifecycle import Stop, stop_on_signals
from .textreport import check_table, outputs_lines, summary_table


def _demo(args) -> int:
    from .samples.demo import DemoError, run_demo
    try:
        with stop_on_signals():
            run_demo(workdir=args.dir, workers=args.workers)
    except Stop as stop:
        print(f"stopped by {stop.name}; run the demo again to start over", file=sys.stderr)
        return stop.exit_code
    except DemoError as exc:
        return _error(exc)
    return 0


def _grade(args) -> int:
    from .run.batch import SchedulerLost, grade_batch
    from .records import OutputError
    try:
        with stop_on_signals():
            result = grade_batch(course=args.course, assignment=args.assignment, out=args.out,
                                 workers=args.workers, resume=args.resume, scheduler=args.scheduler,
                                 students=args.student or None, gradebook_url=args.gradebook,
                                 create_gradebook=args.create_gradebook)
    except Stop as stop:
        print(terminal(_stopped(args, stop)), file=sys.stderr)
        return stop.exit_code
    except SchedulerLost as lost:
        print(terminal(f"error: {lost}: {lost.done} of {lost.total} submissions graded (records in "
                       f"{lost.out / 'records'}, kept). When the scheduler is back, run:\n  "
                       f"{_resume(args, lost.out)}"), file=sys.stderr)
        return 1
    except (OutputError, ValueError, RuntimeError) as exc:
        return _error(exc)
    for note in result.notes:
        print(one_line(f"note: {note}"), file=sys.stderr)
    if result.regraded:
        n = len(result.regraded)
        print(f"{n} record{'s were' if n != 1 else ' was'} graded by an older rubric, source notebooks or "
              "grader version; regraded")
    if result.changed:
        n = len(result.changed)
        print(f"{n} submission{'s' if n != 1 else ''} changed since graded (resubmitted: new notebooks or "
              f"timestamp.txt); regraded: {', '.join(map(shown, result.changed[:10]))}"
              + (f" and {n - 10} more" if n > 10 else ""))
    if result.restored:
        n = len(result.restored)
        print(f"{n} submission{'s' if n != 1 else ''} had lost {'their' if n != 1 else 'its'} autograded notebooks "
              "(a failed nbgrader autograde or Autograde button removes them); regraded to put them back: "
              f"{', '.join(map(shown, result.restored[:10]))}" + (f" and {n - 10} more" if n > 10 else ""))
    print(summary_table(result.records, result.late))
    kept = f"; {len(result.kept)} other students from their records" if result.kept else ""
    print(f"graded {len(result.graded)}, skipped {len(result.skipped)} already complete{kept}")
    print(outputs_lines(result.out))
    for line in result.errors:
        print(one_line(f"error: {line}"), file=sys.stderr)
    return 1 if result.errors else 0


def _error(exc: Exception) -> int:
    print(one_line(f"error: {exc}"), file=sys.stderr)
    return 1


def _stopped(args, stop) -> str:
    """What a stopped run did and the command that finishes it."""
    from .run.batch import BatchStopped
    if not isinstance(stop, BatchStopped):
        return f"stopped by {stop.name} before grading started"
    rest = stop.total - stop.done
    left = (f"the other {rest} {'was' if rest == 1 else 'were'} not graded" if stop.done < stop.total
            else "the outputs (grades.csv, gradebook, feedback, report) may be incomplete")
    return (f"stopped by {stop.name}: {stop.done} of {stop.total} submissions graded (records in "
            f"{stop.out / 'records'}); {left}.\nTo finish, run:\n  {_resume(args, stop.out)}")


def _resume(args, out) -> str:
    """The command that finishes a run stopped midway (the same options, and --resume)."""
    import shlex
    from pathlib import Path
    command = [sys.executable, "-m", "autograder", "grade", "--course", str(Path(args.course).resolve()),
               "--out", str(out)]
    for flag, value in (("--assignment", args.assignment), ("--gradebook", args.gradebook),
                        ("--workers", args.workers), ("--scheduler", args.scheduler)):
        command += [flag, str(value)] if value else []
    command += ["--create-gradebook"] if args.create_gradebook else []
    command += ["--student", *args.student] if args.student else []
    return shlex.join([*command, "--resume"])


def _release(args) -> int:
    from pathlib import Path

    from .course.release import execute_sources, generate_release
    from .grading.chapter import check_release_points
    from .course.settings import choose_assignment
    try:
        check_release_points(Path(args.course), choose_assignment(Path(args.course), args.assignment))
        if args.execute_source:
            for path in execute_sources(Path(args.course), args.assignment):
                print(f"ran {path}")
        print(f"wrote {generate_release(Path(args.course), assignment=args.assignment)}")
    except (ValueError, RuntimeError) as exc:
        return _error(exc)
    return _release_points(Path(args.course), choose_assignment(Path(args.course), args.assignment))


def _release_points(course, assignment: str) -> int:
    """The course's gradebook holds the release's points (re-weighting after release: ``gradebook.points``)."""
    from .course.view import course_settings
    from .gradebook.points import record_points
    settings = course_settings(course)
    try:
        lines = record_points(settings.db_url, settings.root, assignment, settings.course_id)
    except Exception as exc:  # noqa: BLE001 - the release is written; the gradebook's failure is one line
        said = one_line((str(exc).strip().splitlines() or [""])[0])[:300]
        return _error(f"release/ is written, but the gradebook could not be given the new points ({type(exc).__name__}: "
                      f"{said}); when it can be reached, grade --resume records them")
    for line in lines:
        print(line)
    return 0


def _check(args) -> int:
    from .run.check import check_submission
    try:
        with stop_on_signals():
            record = check_submission(args.path, course=args.course, student_id=args.student,
                                      assignment=args.assignment)
    except Stop as stop:
        print(f"stopped by {stop.name}: the submission was not graded", file=sys.stderr)
        return stop.exit_code
    except ValueError as exc:
        return _error(exc)
    print(record.to_json() if args.json else check_table(record, _by_person(record, args)))
    return 0


def _by_person(record, args) -> dict[str, float]:
    """The scores a person set on this submission in the course's gradebook ({} when none can be read)."""
    from pathlib import Path

    from .course.settings import find_course
    from .course.view import course_settings
    from .gradebook.readonly import person_scores
    try:
        course = course_settings(args.course or find_course(Path(args.path).absolute()))
        return person_scores(course.db_url, record.assignment, record.student_id) if course.db_url else {}
    except Exception as exc:  # noqa: BLE001 - the table is printed whatever the gradebook says
        from .inert import one_line
        said = one_line((str(exc).strip().splitlines() or [""])[0])[:300]       # SQLAlchemy's next lines: its SQL
        print(f"note: the gradebook could not be read for a person's scores ({type(exc).__name__}: {said}); the "
              "table shows the checks' scores alone", file=sys.stderr)
        return {}


def _watch(args) -> int:
    from .watch.service import watch
    try:
        watch(course=args.course, assignment=args.assignment, scheduler=args.scheduler, poll=args.poll)
    except Stop as stop:
        print(f"stopped by {stop.name}; the journal keeps every submission handled: run watch again to "
              "continue where it stopped", file=sys.stderr)
        return stop.exit_code
    except (ValueError, RuntimeError, OSError) as exc:
        return _error(exc)
    return 0


def _init(args) -> int:
    from .course.create import CourseExists, init_course, next_steps
    try:
        result = init_course(args.dir, force=args.force, merge=args.merge)
    except CourseExists as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if result.fresh:
        from .gradebook.nbgrader_api import new_course_gradebook
        new_course_gradebook(result.course)
        result.written.append("gradebook.db")
    print(f"course in {result.course}: wrote {', '.join(result.written)}" +
          (f"; kept {', '.join(result.kept)}" if result.kept else ""))
    for note in result.notes:
        print(note)
    for skipped in result.skipped:
        print(f"skipped {skipped}")
    print(next_steps(result.course))
    return 0


def _export(args) -> int:
    from .outputs.lmsexport import export_grades
    from .records import OutputError
    try:
        done = export_grades(course=args.course, assignment=args.assignment, canvas=args.canvas, moodle=args.moodle,
                             column=args.column, match=args.match, out=args.out, gradebook_url=args.gradebook)
    except (OutputError, ValueError, RuntimeError) as exc:
        return _error(exc)
    for note in done.merged.notes:
        print(one_line(f"note: {note}"), file=sys.stderr)
    how = "added as a new column" if done.merged.added else "filled"
    print(one_line(f"{done.merged.filled} scores in the column {shown(done.merged.column)} ({how}): import {done.path}"))
    return 0


def _lti(args) -> int:
    from .lti.report import check_lines, summary_lines
    from .lti.sync import check_platform, sync_grades
    from .records import OutputError
    try:
        with stop_on_signals():
            if args.lti_command == "check":
                lines = check_lines(check_platform(course=args.course, config=args.config))
            else:
                lines = summary_lines(sync_grades(course=args.course, assignment=args.assignment, config=args.config,
                                                  match=args.match, force=args.force, dry_run=args.dry_run,
                                                  out=args.out, gradebook_url=args.gradebook))
    except Stop as stop:
        print(f"stopped by {stop.name}: the sync journal keeps what was posted; run lti sync again to finish",
              file=sys.stderr)
        return stop.exit_code
    except (OutputError, ValueError, RuntimeError) as exc:
        return _error(exc)
    print("\n".join(lines))
    return 0


def _doctor(args) -> int:
    from .sandbox.doctor import render, report, worker_layers
    from .sandbox.layers import detect
    try:
        got, note = worker_layers(), ""
    except RuntimeError as exc:
        got, note = None, f"(what this machine offers: {exc})"
    print(render(report(detect(), got), note))
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not 0.01 <= value <= 60:
        raise argparse.ArgumentTypeError(f"must be from 0.01 to 60 seconds, got {text}")
    return value


COURSE_HELP = ("the course folder (default: c.CourseDirectory.root as nbgrader reads it, from the working folder's or "
               "~/.jupyter's nbgrader_config.py, else the working folder)")


def build_parser() -> argparse.ArgumentParser:
    """The command line: each command's options are its own function's (``_<command>_parser``)."""
    parser = argparse.ArgumentParser(prog="python -m autograder",
                                     description="attention-course: grade scaled dot-product attention notebooks safely")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_demo_parser, _grade_parser, _check_parser, _watch_parser, _init_parser, _export_parser,
                _lti_parser, _doctor_parser, _release_parser):      # one function per command, in --help's order
        add(sub)
    return parser


def _demo_parser(sub) -> None:
    """`demo`'s options."""
    demo = sub.add_parser("demo", help="grade the bundled sample class into demo/ (what `make demo` runs)")
    demo.add_argument("--workers", type=_positive, default=None)
    demo.add_argument("--dir", default=None, help="where to lay out and grade the sample class (default ./demo)")
    demo.set_defaults(func=_demo)


def _grade_parser(sub) -> None:
    """`grade`'s options."""
    grade = sub.add_parser("grade", help="grade every submission under COURSE/submitted/<student>/<assignment>/")
    grade.add_argument("--course", default=None, help=COURSE_HELP)
    grade.add_argument("--assignment", default=None,
                       help="the assignment to grade (default: the only one under COURSE/source/)")
    grade.add_argument("--out", default=None, help="output folder (default COURSE/grading)")
    grade.add_argument("--workers", type=_positive, default=None,
                       help="grading processes (default: 1 for a class of at most 30, else one per core)")
    grade.add_argument("--resume", action="store_true", help="skip students whose record is complete")
    grade.add_argument("--scheduler", default=None, help="a Dask distributed scheduler address")
    grade.add_argument("--student", nargs="*", default=None, help="grade only these students")
    grade.add_argument("--gradebook", default=None, metavar="URL",
                       help="write scores to this nbgrader gradebook (default: the course's db_url)")
    grade.add_argument("--create-gradebook", action="store_true",
                       help="start a new gradebook (the --gradebook SQLite file, or the course's own) when it "
                            "does not exist, even where an earlier run used one")
    grade.set_defaults(func=_grade)


def _check_parser(sub) -> None:
    """`check`'s options."""
    check = sub.add_parser("check", help="grade one submission (a folder or a notebook) in the sandbox")
    check.add_argument("path")
    check.add_argument("--json", action="store_true", help="print the result record as JSON")
    check.add_argument("--course", default=None, help="course folder (default: found above PATH)")
    check.add_argument("--student", default=None, help="student id (default: from the nbgrader layout)")
    check.add_argument("--assignment", default=None, help="assignment (default: from the nbgrader layout)")
    check.set_defaults(func=_check)


def _watch_parser(sub) -> None:
    """`watch`'s options."""
    watch = sub.add_parser("watch", help="feedback on submit: grade each submission reaching nbgrader's exchange "
                           "and publish its pages for fetch_feedback")
    watch.add_argument("--course", default=None, help=COURSE_HELP)
    watch.add_argument("--assignment", default=None,
                       help="the assignment to watch (default: the only one under COURSE/source/)")
    watch.add_argument("--scheduler", default=None, help="a Dask distributed scheduler address")
    watch.add_argument("--poll", type=_seconds, default=None, metavar="SECONDS",
                       help="look at the inbound folder every SECONDS instead of inotify (an exchange on NFS)")
    watch.set_defaults(func=_watch)


def _init_parser(sub) -> None:
    """`init`'s options."""
    init = sub.add_parser("init", help="lay out an nbgrader course holding this chapter in DIR")
    init.add_argument("dir")
    init.add_argument("--force", action="store_true", help="overwrite this chapter's files and the config")
    init.add_argument("--merge", action="store_true",
                      help="add this chapter to an existing course, keeping its config and assignments")
    init.set_defaults(func=_init)


def _export_parser(sub) -> None:
    """`export`'s options."""
    export = sub.add_parser("export", help="merge the assignment's totals (as nbgrader export has them) into the "
                            "gradebook exported from Canvas or Moodle, for the LMS to import")
    lms = export.add_mutually_exclusive_group(required=True)
    lms.add_argument("--canvas", metavar="GRADEBOOK.csv", help="Canvas's export (Grades, Export)")
    lms.add_argument("--moodle", metavar="GRADES.csv", help="Moodle's export (Export, Plain text file)")
    export.add_argument("--column", default=None, metavar="NAME",
                        help="the LMS's column for the assignment (default its name; added when the export has none)")
    export.add_argument("--match", choices=("login", "sis", "email"), default=None,
                        help="match students by login (student id = SIS Login ID / Username), sis (SIS User ID / "
                        "ID number) or email (default: login for Canvas, email for Moodle)")
    export.add_argument("--course", default=None, help=COURSE_HELP)
    export.add_argument("--assignment", default=None,
                        help="the assignment (default: the only one under COURSE/source/)")
    export.add_argument("--out", default=None, help="where to write the file (default COURSE/grading)")
    export.add_argument("--gradebook", default=None, metavar="URL", help="the gradebook (default: the course's db_url)")
    export.set_defaults(func=_export)


def _lti_parser(sub) -> None:
    """`lti`'s options."""
    lti = sub.add_parser("lti", help="grades into the LMS by LTI 1.3 (docs/how-to/lti.md)")
    lti_sub = lti.add_subparsers(dest="lti_command", required=True)
    sync = lti_sub.add_parser("sync", help="post the assignment's totals to the LMS (roster by NRPS, scores by AGS)")
    check_lti = lti_sub.add_parser("check", help="try the LTI registration: tokens, roster, columns (posts nothing)")
    for command in (sync, check_lti):
        command.add_argument("--course", default=".")
        command.add_argument("--config", default=None, metavar="FILE",
                             help="the LTI registration file, yours, mode 600 (default COURSE/lti.toml)")
    sync.add_argument("--assignment", default=None, help="the assignment (default: the only one under COURSE/source/)")
    sync.add_argument("--match", choices=("login", "sis", "email"), default=None,
                      help="match students by login, sis or email (default: the registration file's match)")
    sync.add_argument("--force", action="store_true", help="overwrite scores changed in the LMS since the last sync")
    sync.add_argument("--dry-run", action="store_true", help="say what would be posted, post nothing")
    sync.add_argument("--out", default=None, help="where the sync journal and report go (default COURSE/grading)")
    sync.add_argument("--gradebook", default=None, metavar="URL", help="the gradebook (default: the course's db_url)")
    lti.set_defaults(func=_lti)


def _doctor_parser(sub) -> None:
    """`doctor`'s options."""
    doctor = sub.add_parser("doctor", help="list the isolation layers this machine provides")
    doctor.set_defaults(func=_doctor)


def _release_parser(sub) -> None:
    """`release`'s options."""
    release = sub.add_parser("release", help="generate release/ from source/ with nbgrader")
    release.add_argument("--course", default=None, help=COURSE_HELP)
    release.add_argument("--assignment", default=None,
                         help="the assignment to release (default: the only one under COURSE/source/)")
    release.add_argument("--execute-source", action="store_true",
                         help="first re-run the source notebooks so their stored outputs are current")
    release.set_defaults(func=_release)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in COURSE_COMMANDS and args.course is None:
        from .course.settings import default_course
        args.course = str(default_course())
    return args.func(args)


COURSE_COMMANDS = ("grade", "watch", "export", "release")     # --course: as nbgrader finds the course when not given


if __name__ == "__main__":
    from .lifecycle import exit_now
    exit_now(main())
