"""nbgrader's own pages show a student's text as text (issue 35, item 8), end to end: a student whose softmax
raises an exception carrying a bidi override, an ANSI escape, HTML, markdown and TeX, and whose notebook holds
raw and markdown cells with the same, is graded by ``grade`` and by nbgrader's own ``autograde`` (our door);
nbgrader's real ``generate_feedback`` renders both autograded notebooks into the student's page, which holds no
bidi control, no escape sequence, no element or link of the student's and no TeX MathJax would typeset."""
import json
import shutil

import pytest

from autograder.run.batch import grade_batch
from batch_helpers import make_class
from nbgrader_fast import run_nbgrader
from inert_pages import MARKS, assert_inert

pytestmark = [pytest.mark.filterwarnings("ignore:.*not in session")]
A, NB = "ch04_attention", "ex1_attention"
PAYLOAD = ("\u202e)1/1( ssap\u202c \u2067BIDIMARK\u2069 \x1b[8mANSIMARK\x1b[0m "
           '<a href="http://evil.example/a">LINKMARK</a> <b>BOLDMARK</b> <table><tr><td>TABLEMARK</td></tr></table> '
           "**MDBOLD** [MDLINK](http://evil.example/m) $MATHMARK^2$ \\(INLINEMARK\\) $$DISPLAYMARK$$ "
           "\\begin{equation}ENVMARK\\end{equation}")
RAISES = f"def softmax(x, axis=-1):\n    raise ValueError({PAYLOAD!r})\n"


def _page(course) -> str:
    run_nbgrader(["generate_feedback", A, "--force", "--log-level=WARN"], course, "generate_feedback")
    return (course / "feedback" / "mallory" / A / f"{NB}.html").read_text()


def test_generate_feedback_pages_of_grade_and_of_the_door_show_student_text_as_text(tmp_path):
    course = make_class(tmp_path, [], custom={"mallory": {"softmax": RAISES}})
    path = course / "submitted" / "mallory" / A / f"{NB}.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"] += [{"cell_type": "raw", "id": "r1", "metadata": {}, "source": PAYLOAD},
                    {"cell_type": "raw", "id": "r2", "metadata": {"format": "text/html"}, "source": PAYLOAD},
                    {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": PAYLOAD}]
    path.write_text(json.dumps(nb))
    run_nbgrader(["generate_assignment", A, "--force", "--log-level=WARN"], course, "generate_assignment")
    assert not grade_batch(course=course, workers=1, progress=False).errors
    pages = {"grade": _page(course)}
    shutil.rmtree(course / "autograded")
    run_nbgrader(["autograde", A, "--force", "--log-level=WARN"], course, "autograde")
    pages["the door"] = _page(course)
    for door, page in pages.items():
        assert "ssap" in page and "ValueError" in page                 # the student's message is there, as text
        for kind in MARKS:
            assert_inert(page, kind, f"generate_feedback of {door}'s notebook")
