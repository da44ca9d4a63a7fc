"""The course on a real JupyterHub (slow; one Hub for the module, started once).

Real Linux accounts (an instructor, four students) log in with their passwords through the Hub's login
page (PAM, the Hub's default authenticator, against passwords set by chpasswd: no test double decides
who may log in); LocalProcessSpawner starts each server as its account, a student's from the students'
environment (no grader package in it), the instructor's from the grader's (readable by the instructor's
group only), as docs/how-to/jupyterhub.md lays them out; nbgrader's exchange is a shared 1777 folder and every
server reads a system-wide nbgrader_config.py; `watch` is a managed service of the Hub, run as the
instructor from the grader's environment. Headless Chromium (Debian's) does what students and the
instructor do.
Screenshots of the key pages go to test-artifacts/jupyterhub/.

Needs root (useradd, a Hub that starts servers as other users); skips and says so otherwise.
"""
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import pytest

from browser_helpers import FLAGS, browser
from hub_helpers import A, ROOT, run_in_server, shell_in_server
from hub_site import fill_in, hub_site, requirements
from watch_helpers import events

STUDENTS = ["ada", "bob", "cy", "di"]
RUSH = "s00"                # benchmarks/hub_rush.py's student, on this Hub (one Hub for the suite)
SHOTS = ROOT / "test-artifacts" / "jupyterhub"
SETTINGS = 'c.FeedbackOnSubmit.limit = "2/day"\n'


@pytest.fixture(scope="module")
def site():
    if os.geteuid() != 0:
        pytest.skip("the JupyterHub tests need root: they create Linux accounts (useradd) and run a Hub that "
                    "starts each user's server as that user")
    missing = requirements()
    if missing:
        pytest.fail(f"the JupyterHub tests cannot run: missing {missing}")
    with hub_site([*STUDENTS, RUSH], SETTINGS) as (site, accounts, hub):
        yield site, accounts, hub


@pytest.fixture(scope="module")
def pages(site):
    """One logged-in browser page per account (its own cookies), kept for the module."""
    sync_api, chromium = browser()
    site_, accounts, hub = site
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
        yield Pages(chrome, site_, accounts, hub)
        chrome.close()


class Pages(dict):
    def __init__(self, chrome, site, accounts, hub):
        super().__init__()
        self.chrome, self.site, self.accounts, self.hub = chrome, site, accounts, hub

    def login(self, user: str, password: str | None = None):
        context = self.chrome.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(f"{self.site.url}/hub/login", timeout=60_000)
        page.fill("#username_input", user)
        page.fill("#password_input", password or self.accounts.passwords[user])
        page.click("#login_submit")
        return page

    def __missing__(self, user: str):
        page = self.login(user)
        page.wait_for_url(f"**/user/{user}/lab**", timeout=240_000)
        page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)
        self[user] = page
        return page


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def open_assignment_list(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click(timeout=60_000)
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click(timeout=30_000)


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_a_wrong_password_is_refused_at_the_hubs_login_page(site, pages):
    _, accounts, _ = site
    ada = accounts["ada"]
    page = pages.login(ada, accounts.passwords[accounts["bob"]])          # a classmate's password
    page.wait_for_selector(".login_error", timeout=60_000)
    assert "/hub/login" in page.url and "Invalid username or password" in page.content()
    shot(page, "login-refused")
    page.context.close()


def test_each_student_logs_in_and_fetches_from_the_assignment_list(site, pages):
    site_, accounts, hub = site
    names = [accounts[s] for s in STUDENTS]
    hub.start_servers(names + [site_.instructor])          # spawned at once; the logins find them ready
    for name in names:
        page = pages[name]
        open_assignment_list(page)
        page.get_by_role("button", name="Fetch", exact=True).click(timeout=90_000)
    for name in names:
        folder = site_.homes / name / A
        wait_for(lambda: len(list(folder.glob("*.ipynb"))) == 4, 90, f"{name}'s fetched notebooks")
        uid = accounts.uid(name)
        assert {p.stat().st_uid for p in folder.glob("*.ipynb")} == {uid}, "fetched as the student's account"
    shot(pages[names[0]], "assignment-list-fetched")


STUDENT_READS = """
import json, os, sys
found = {"imported": [], "read": [], "on its path": []}
for name in ("solutions", "autograder"):
    try:
        __import__(name)
        found["imported"].append(name)
    except ImportError:
        pass
for what, path in SECRETS.items():
    try:
        with open(path, "rb") as f:
            f.read(1)
        found["read"].append(what)
    except OSError:
        pass
for entry in sys.path:                      # nothing a kernel imports from holds the package or a source notebook
    for folder, dirs, files in os.walk(entry or "."):
        if os.path.basename(folder) in ("solutions", "autograder", "course_files") or \\
                any(f.startswith("__editable__") for f in files):
            found["on its path"].append(folder)
        for name in files:
            if name.endswith(".ipynb"):
                text = open(os.path.join(folder, name), errors="replace").read()
                if "BEGIN SOLUTION" in text and "scaled_dot_product_attention" in text:
                    found["on its path"].append(os.path.join(folder, name))
print("FOUND " + json.dumps(found))
"""


def test_a_students_server_can_read_no_solution_nor_hidden_test(site, pages):
    """Issue 35, item 5: a student's server runs from the students' environment, which holds no `solutions` and no
    `autograder` (the rubric the hidden tests call); the grader's environment, the course and this checkout are
    closed to students. Everything a student's kernel can import from is searched too. (Fetch, Submit, watch and
    fetch_feedback working from that environment are the other tests of this module.)"""
    site_, accounts, hub = site
    grader_site = next(site_.grader_env.glob("lib/python3*/site-packages"))
    secrets = {"the grader's reference engine": grader_site / "solutions" / "__init__.py",
               "the grader's rubric": grader_site / "autograder" / "grading" / "rubric.py",
               "the grader's copy of a source notebook": grader_site / "autograder" / "course_files" / "source" / A /
               "ex1_attention.ipynb",
               "the course's source notebook": site_.course / "source" / A / "ex1_attention.ipynb",
               "the course's gradebook": site_.course / "gradebook.db",
               "this checkout's source notebook": ROOT / "source" / A / "ex1_attention.ipynb",
               "this checkout's reference engine": ROOT / "solutions" / "__init__.py"}
    assert all(path.exists() for path in secrets.values()), [w for w, p in secrets.items() if not p.exists()]
    for role in ("ada", "bob"):
        printed = run_in_server(hub, accounts[role], STUDENT_READS.replace(
            "SECRETS", repr({what: str(path) for what, path in secrets.items()})))
        found = json.loads(next(line for line in printed.splitlines() if line.startswith("FOUND "))[6:])
        assert found == {"imported": [], "read": [], "on its path": []}, (role, found)
    teach = run_in_server(hub, site_.instructor, "import autograder, solutions\nprint(autograder.__file__)")
    assert teach.strip().startswith(str(site_.grader_env)), teach          # the instructor's server: the grader's


def test_doctor_in_the_instructors_server_shows_every_layer_grading_gets_here(site, pages):
    """Issue 38, item 5: `doctor`, run where grading runs (the instructor's account, the grader's environment),
    names every layer with what a worker started there got, and what each missing one costs. Its output is kept
    in test-artifacts/jupyterhub/doctor.txt (docs/how-to/jupyterhub.md quotes it)."""
    from autograder.sandbox.status import SANDBOX_LAYERS
    site_, _, hub = site
    out = shell_in_server(hub, site_.instructor, ["python", "-m", "autograder", "doctor"])
    (SHOTS / "doctor.txt").write_text(out)
    rows = {line.split("  ")[0]: line for line in out.splitlines() if line and not line.startswith(" ")}
    assert set(SANDBOX_LAYERS.values()) <= set(rows), set(SANDBOX_LAYERS.values()) - set(rows)
    for layer in ("PID namespace", "own root", "mount namespace", "landlock", "seccomp", "user namespace"):
        assert "applied" in rows[SANDBOX_LAYERS[layer]], rows[SANDBOX_LAYERS[layer]]
    assert "without it: memory is capped per process" in out and out.strip().splitlines()[-1].startswith(
        "This deployment lacks"), out


SAMPLES = {"ada": "correct-1", "bob": "no-scaling", "cy": "mask-after-softmax", "di": "correct-2"}


def journal(site_) -> list[dict]:
    """watch's journal (JSON lines); read again if a line was caught half written."""
    try:
        return events(site_.course)
    except ValueError:
        time.sleep(0.2)
        return events(site_.course)


def entries_of(site_, user: str, kind: str) -> list[dict]:
    ours = {e["entry"] for e in journal(site_) if e["event"] == "received" and e.get("student") == user}
    return [e for e in journal(site_) if e["event"] == kind and e["entry"] in ours]


def feedback_pages(site_, user: str) -> dict[str, str]:
    """timestamp/notebook -> the page fetch_feedback put in the student's folder."""
    folder = site_.homes / user / A / "feedback"
    return {f"{p.parent.name}/{p.stem}": p.read_text() for p in sorted(folder.glob("*/*.html"))}


def click(page, button: str, nth: int = 0) -> None:
    page.get_by_role("button", name=button, exact=True).nth(nth).click(timeout=90_000)


def test_submit_in_the_assignment_list_gets_each_student_their_own_pages_from_the_watch_service(site, pages):
    from autograder.samples import sample_class
    site_, accounts, hub = site
    code = sample_class.students()
    names = {accounts[s]: s for s in STUDENTS}
    for name, role in names.items():
        fill_in(hub, name, code[SAMPLES[role]])
        click(pages[name], "Submit")
    for name in names:
        wait_for(lambda: entries_of(site_, name, "published"), 180, f"watch's pages for {name}")
        assert entries_of(site_, name, "published")[0]["kind"] == "feedback"
    inbound = site_.exchange / "attention-course" / "inbound"
    assert {(p.name.split("+")[0], p.stat().st_uid) for p in inbound.iterdir()} == \
        {(n, accounts.uid(n)) for n in names}                    # each folder is its submitter's own
    for name in names:
        click(pages[name], "Fetch Feedback")
    for name, role in names.items():
        wait_for(lambda: len(feedback_pages(site_, name)) == 4, 90, f"{name}'s fetched feedback")
        shown = feedback_pages(site_, name)
        assert all(f"Feedback for {name}:" in page and "Pre-deadline feedback" in page for page in shown.values())
        assert not any(other in page for page in shown.values() for other in names if other != name)
        graded = entries_of(site_, name, "graded")[0]
        assert (graded["total"] == graded["max"]) == SAMPLES[role].startswith("correct"), (name, graded)
        ex1 = next(page for key, page in shown.items() if key.endswith("ex1_attention"))
        assert ("Score: 8 / 8" in ex1) == (role != "bob"), (name, role)          # bob forgot the scaling
    shot(pages[accounts["bob"]], "assignment-list-feedback-fetched")


def test_a_student_can_neither_spend_a_classmates_checks_nor_fetch_their_pages(site, pages):
    """bob submits in ada's name from his own server (nbgrader submit --student ada): the folder is his
    account's, so watch grades nothing, publishes nothing and counts nothing against ada's limit (2 a day:
    her second check is still graded); bob then cannot fetch a page as ada, nor read her secrets."""
    site_, accounts, hub = site
    ada, bob = accounts["ada"], accounts["bob"]
    for _ in range(2):
        shell_in_server(hub, bob, ["nbgrader", "submit", A, f"--student={ada}", "--log-level=WARN"])
    wait_for(lambda: len([e for e in journal(site_) if e["event"] == "note" and f"belongs to '{bob}'" in
                          e["note"]]) == 2, 120, "watch's notes on bob's submissions in ada's name")
    click(pages[ada], "Submit")
    wait_for(lambda: len(entries_of(site_, ada, "published")) == 2, 180, "ada's second page")
    assert [e["kind"] for e in entries_of(site_, ada, "published")] == ["feedback", "feedback"]
    before = feedback_pages(site_, bob)
    fetched = shell_in_server(hub, bob, ["nbgrader", "fetch_feedback", A, f"--student={ada}"], check=False)
    assert feedback_pages(site_, bob) == before, fetched                   # nothing of ada's came
    secrets = list((site_.homes / ada).glob(".local/share/jupyter/nbgrader_cache/*/*/submission_secret.txt"))
    assert secrets
    refused = shell_in_server(hub, bob, ["python", "-c", f"open({str(secrets[0])!r})"], check=False)
    assert "PermissionError" in refused, refused


def watch_pids(site_, accounts) -> list[int]:
    """The service's own process (not its fork server or workers): the instructor's `autograder watch`."""
    from hub_accounts import processes_of
    from run_tree import cmdline
    pids = [pid for pid in processes_of({accounts.uid(site_.instructor)}) if "-m autograder watch" in cmdline(pid)]
    return [pid for pid in pids if _parent(pid) not in pids]          # not the child it grades in (its fork)


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def test_the_hub_restarts_the_watch_service_when_it_dies(site, pages):
    """JupyterHub restarts a managed service that exits (it polls it every 30 s); the new one takes the
    course's lock and grades what arrives."""
    import signal
    site_, accounts, hub = site
    old = watch_pids(site_, accounts)
    assert len(old) == 1, old
    os.kill(old[0], signal.SIGKILL)
    wait_for(lambda: watch_pids(site_, accounts) not in ([], old), 90, "the Hub to start watch again")
    di = accounts["di"]
    click(pages[di], "Submit")
    wait_for(lambda: len(entries_of(site_, di, "published")) == 2, 180, "di's page from the restarted watch")
    assert "Service attention-watch exited" in hub.log_tail(200_000)


def formgrader_api(hub, teach: str, path: str):
    status, body = hub.api("GET", f"/user/{teach}/formgrader/api/{path}")
    assert status == 200, (path, status, body)
    return body


def test_the_instructor_grades_in_their_own_server_and_each_student_sees_only_their_own_feedback(site, pages):
    """collect and grade run in the instructor's server; formgrader is blocked inside JupyterLab (the Hub's
    Content-Security-Policy frame-ancestors 'none' on every single-user page: nbgrader issue 1870) and works
    opened at its own URL, where a score and a comment are entered by hand; grade --resume keeps them and
    release_feedback delivers each student's graded pages to that student alone."""
    site_, accounts, hub = site
    teach, course = site_.instructor, site_.course
    names = {accounts[s]: s for s in STUDENTS}
    shell_in_server(hub, teach, ["nbgrader", "collect", A, "--log-level=WARN"], cwd=course)
    shell_in_server(hub, teach, ["python", "-m", "autograder", "grade", "--course", str(course)], cwd=course)
    assert "frame-ancestors 'none'" in hub.headers(f"/user/{teach}/formgrader").get("content-security-policy", "")

    lab = pages[teach]
    lab.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click(timeout=60_000)
    lab.locator(".lm-Menu-itemLabel").get_by_text("Formgrader", exact=True).click(timeout=30_000)   # its panel
    lab.wait_for_selector("iframe", timeout=60_000)
    lab.wait_for_timeout(3000)
    assert not any("Manage Assignments" in _text(f) for f in lab.frames[1:]), "formgrader rendered in the iframe"
    shot(lab, "formgrader-inside-lab-blocked")

    bob = accounts["bob"]
    notebook = next(s for s in formgrader_api(hub, teach, f"submitted_notebooks/{A}/ex1_attention")
                    if s["student"] == bob)
    grade = next(g for g in formgrader_api(hub, teach, f"grades?submission_id={notebook['id']}")
                 if g["name"] == "ex1_attention")
    page = lab.context.new_page()
    page.goto(f"{site_.url}/user/{teach}/formgrader/submissions/{notebook['id']}/", timeout=120_000)
    page.fill("input.score#ex1_attention", str(grade["auto_score"] + 1), timeout=60_000)
    page.keyboard.press("Tab")
    page.locator("textarea.comment").first.fill("Divide the scores by sqrt(d_k) before the softmax.")
    page.keyboard.press("Tab")
    wait_for(lambda: any(c["manual_comment"] for c in
                         formgrader_api(hub, teach, f"comments?submission_id={notebook['id']}")), 60,
             "formgrader to save the comment")
    saved = next(g for g in formgrader_api(hub, teach, f"grades?submission_id={notebook['id']}")
                 if g["name"] == "ex1_attention")
    assert saved["manual_score"] == grade["auto_score"] + 1
    shot(page, "formgrader-opened-directly-manual-grade")

    shell_in_server(hub, teach, ["python", "-m", "autograder", "grade", "--course", str(course), "--resume"],
                    cwd=course)
    shell_in_server(hub, teach, ["nbgrader", "release_feedback", A, "--log-level=WARN"], cwd=course)
    for name in names:
        click(pages[name], "Fetch Feedback")
    for name in names:
        wait_for(lambda: any("Pre-deadline" not in p for p in feedback_pages(site_, name).values()), 90,
                 f"{name}'s graded feedback")
        graded = {k: p for k, p in feedback_pages(site_, name).items() if "Pre-deadline" not in p}
        assert len(graded) == 4 and not any(o in p for p in graded.values() for o in names if o != name)
        said = any("Divide the scores by sqrt(d_k) before the softmax." in p for p in graded.values())
        assert said == (name == bob), name
        key = next(k for k in graded if k.endswith("ex1_attention"))
        view = pages[name]
        view.goto(f"{site_.url}/user/{name}/files/{A}/feedback/{key}.html", timeout=60_000)
        assert "ex1_attention" in view.title() and "Score:" in view.content()
        assert not any(o in view.content() for o in names if o != name)
        shot(view, f"graded-feedback-{names[name]}")


def _text(frame) -> str:
    try:
        return frame.content()
    except Exception:                       # a frame the browser blocked or tore down
        return ""


def test_the_hub_rush_benchmark_runs_at_its_smallest_size(site, monkeypatch, capsys):
    """benchmarks/hub_rush.py --smoke (one student, one submission) on this module's Hub rather than a Hub of
    its own: its student's server spawned, the notebooks fetched, filled in and submitted, watch's page
    published, and the figures printed (what they say means nothing here; tests/house/test_benchmarks.py
    runs every script that needs no server)."""
    site_, accounts, hub = site
    spec = importlib.util.spec_from_file_location("hub_rush", ROOT / "benchmarks" / "hub_rush.py")
    hub_rush = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hub_rush)
    monkeypatch.setattr(sys, "argv", ["hub_rush.py", "--smoke"])
    hub_rush.rush(hub_rush._arguments(), site_, hub, [accounts[RUSH]])      # raises when a submit or page failed
    printed = capsys.readouterr().out
    assert "1 servers spawned, each student's notebooks fetched and filled in" in printed, printed
    assert "1 students x 1 submissions = 1 within 0 s; 1 pages published" in printed, printed
    assert "Submit to fetchable: p50" in printed and all(f"{g:8s} CPU" in printed for g in ("hub", "servers", "watch"))


def test_stopping_the_hub_stops_every_server_kernel_and_the_watch_service(site):
    site_, accounts, hub = site
    from hub_accounts import processes_of
    assert processes_of(accounts.uids())                  # servers and the service are running
    status, left = hub.stop(within=90)
    assert left == [], left
    assert processes_of(accounts.uids()) == []
