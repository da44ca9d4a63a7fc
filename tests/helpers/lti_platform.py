"""A real LTI 1.3 platform on 127.0.0.1 for the grade sync tests: lti1p3platform (PyPI) served over HTTP.

The platform's logic is the library's: its ``Registration`` and ``LTI1P3PlatformConfAbstract`` verify the
tool's signed client assertion against the tool's public key and issue signed bearer tokens; its
``AssignmentsGradesService`` and ``NamesRoleProvisioningService`` handlers check each token (signature,
issuer, expiry, scopes), build the paged containers and their next links, and answer with the AGS and
NRPS status codes. The library has no HTTP server of its own (it ships Django and FastAPI adapters), so
this file serves it with ``http.server`` on loopback, translating its responses as its Django adapter
does (``framework/django/response.py``: the page's content as the body, ``next`` as a Link header).

What is ours, because the library leaves it abstract: the storage (members, line items, results, in
memory), and the switches a test turns on the platform as an LMS administrator or a slow network would:
the scopes the tool's registration grants, a shorter token lifetime, a score request held or delayed, a
user whose score the LMS will not apply. A test edits a result as a person editing the LMS's gradebook.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform import exceptions as lti_errors
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request
from lti1p3platform.response import generate_next_link
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService

ISSUER, CLIENT_ID, DEPLOYMENT = "https://lms.example.edu", "tool-client-42", "deployment-1"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
BASE = "/api/lti/courses/1"


def private_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def public_pem(private: str) -> str:
    key = serialization.load_pem_private_key(private.encode(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


class TestRegistration(Registration):
    """The library's registration; ``lifetime`` shortens the tokens it signs (the answer still says 3600 s,
    as an LMS whose tokens are revoked early would)."""
    lifetime: int | None = None

    def encode_and_sign(self, payload, private_key, headers=None, expiration=None):
        if expiration and self.lifetime:
            expiration = self.lifetime
        return Registration.encode_and_sign(payload, private_key, headers, expiration=expiration)


class PlatformConf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, registration=None, **_):
        self._registration = registration

    def get_registration_by_params(self, **_):
        return self._registration


@dataclass
class Store:
    """What the LMS holds (ours: the library leaves storage abstract) and what the tests switch."""
    members: list = field(default_factory=list)
    items: dict = field(default_factory=dict)          # number -> line item
    results: dict = field(default_factory=dict)        # number -> {user id -> result}
    last_stamp: dict = field(default_factory=dict)     # (number, user) -> timestamp of the last score applied
    scores: list = field(default_factory=list)         # every score applied: (number, score)
    tokens: int = 0
    made: int = 0                                      # line items ever created (their numbers)
    granted: set | None = None                         # scopes the registration grants (None: all)
    refuse: set = field(default_factory=set)           # users whose scores the LMS will not apply
    hold_at: int | None = None                         # the n-th score request (1-based) waits for ``release``
    delay: dict = field(default_factory=dict)          # n-th score request -> seconds to wait first
    score_requests: int = 0
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    applied: threading.Event = field(default_factory=threading.Event)
    lock: threading.RLock = field(default_factory=threading.RLock)


def _page(rows: list, page, limit) -> dict:
    if not limit:
        return {"content": rows, "has_next": False}
    start = (int(page) - 1) * int(limit)
    return {"content": rows[start:start + int(limit)], "has_next": start + int(limit) < len(rows)}


class Grades(AssignmentsGradesService):
    """The library's AGS handlers over our storage."""

    def __init__(self, request, conf, platform: "Platform", number: str | None = None):
        self.store, self.platform = platform.store, platform
        super().__init__(request, conf, platform.url(f"{BASE}/lineitems"),
                         platform.url(f"{BASE}/lineitems/{number}") if number else None)

    def find_lineitems(self, page=1, limit=None, line_item_id=None, resource_link_id=None, resource_id=None,
                       tag=None, **_):
        items = [i for i in self.store.items.values() if (resource_id is None or i.get("resourceId") == resource_id)
                 and (tag is None or i.get("tag") == tag)]
        return _page(items, page, limit)

    def find_lineitem(self, line_item_id):
        if line_item_id not in self.store.items:
            raise lti_errors.LineItemNotFoundException()
        return self.store.items[line_item_id]

    def create_lineitem(self, creation_data):
        with self.store.lock:
            self.store.made += 1
            number = str(self.store.made)
            item = {**creation_data, "id": self.platform.url(f"{BASE}/lineitems/{number}")}
            self.store.items[number], self.store.results[number] = item, {}
        return item

    def update_lineitem(self, update_data):
        number = update_data["id"]
        self.find_lineitem(number)
        self.store.items[number].update({k: v for k, v in update_data.items() if k != "id"})
        return self.store.items[number]

    def delete_lineitem(self, line_item_id):
        self.find_lineitem(line_item_id)
        del self.store.items[line_item_id]

    def update_score(self, line_item_id, score):
        self.find_lineitem(line_item_id)
        user, stamp = str(score.get("userId")), str(score.get("timestamp"))
        with self.store.lock:
            if user in self.store.refuse:
                return UpdateScoreStatus.NOTAPPLIED
            if stamp <= self.store.last_stamp.get((line_item_id, user), ""):
                return UpdateScoreStatus.OLD_TIMESTAMP
            self.store.last_stamp[(line_item_id, user)] = stamp
            self.store.scores.append((line_item_id, dict(score)))
            result = {"id": f"{self.ags.lineitem_url}/results/{user}", "scoreOf": self.ags.lineitem_url,
                      "userId": user}
            if "scoreGiven" in score:     # AGS: a score without scoreGiven clears the result's score
                result.update(resultScore=score["scoreGiven"], resultMaximum=score.get("scoreMaximum", 1))
            self.store.results[line_item_id][user] = result
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id, page=1, limit=None, user_id=None, **_):
        self.find_lineitem(line_item_id)
        rows = [r for u, r in self.store.results[line_item_id].items() if user_id is None or u == user_id]
        return _page(rows, page, limit)


class Roster(NamesRoleProvisioningService):
    """The library's NRPS handler over our members."""

    def __init__(self, request, conf, platform: "Platform"):
        self.store = platform.store
        super().__init__(request, conf, platform.url(f"{BASE}/memberships"))

    def get_member_data_page(self, page=1, limit=None, role=None, since=None, **_):
        return _page(self.store.members, page, limit)

    def get_context_by_id(self):
        return Context(id="course-1", label="CH04", title="Attention")

    def is_resource_link_valid(self, context_id, resource_link_id):
        return True


class HttpRequest(Request):
    """An http.server request as the library's handlers read one (as its Django adapter builds it)."""

    def build_metadata(self, raw):
        method, path, headers, body = raw
        parts = urlsplit(path)
        query = dict(parse_qsl(parts.query))
        for name in ("page", "limit"):           # the library adds 1 to the page: numbers, as Django forms give
            if name in query and query[name].isdigit():
                query[name] = int(query[name])
        kind = headers.get("Content-Type", "")
        return {"method": method, "path": parts.path, "headers": headers, "content_type": kind, "get_data": query,
                "form_data": dict(parse_qsl(body.decode())) if "form" in kind else {},
                "json": json.loads(body) if body and "json" in kind else None}


class Platform:
    """The platform served on 127.0.0.1: ``url(path)``, the tool's ``key`` (its private PEM), the ``store``."""

    def __init__(self):
        self.key, platform_key = private_pem(), private_pem()
        self.registration = (TestRegistration().set_iss(ISSUER).set_client_id(CLIENT_ID)
                             .set_deployment_id(DEPLOYMENT).set_platform_private_key(platform_key)
                             .set_platform_public_key(public_pem(platform_key)))
        tool_jwk = Registration.get_jwk(public_pem(self.key))         # the tool's key, as the admin pasted it
        self.registration.set_tool_key_set({"keys": [tool_jwk]})
        self.store = Store()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.platform = self
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "Platform":
        self.thread.start()
        return self

    def close(self) -> None:
        self.store.release.set()
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def reset(self) -> None:
        """A new, empty course: no members, no columns, no switches."""
        self.store = Store()
        self.registration.lifetime = None

    def conf(self) -> PlatformConf:
        return PlatformConf(registration=self.registration)

    def write_config(self, folder: Path, **settings) -> Path:
        """The instructor's registration file and key for this platform (mode 600, in a folder of theirs)."""
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = folder / "lti-tool.pem"
        key.write_text(self.key)
        key.chmod(0o600)
        values = {"issuer": ISSUER, "client_id": CLIENT_ID, "deployment_id": DEPLOYMENT,
                  "token_url": self.url("/token"), "private_key": key.name,
                  "lineitems_url": self.url(f"{BASE}/lineitems"), "memberships_url": self.url(f"{BASE}/memberships"),
                  **settings}
        path = folder / "lti.toml"
        path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items()))
        path.chmod(0o600)
        return path

    # what a person does in the LMS
    def results(self, number: str = "1") -> dict:
        """User id -> the LMS's result (score or None) on line item ``number``."""
        return {u: r.get("resultScore") for u, r in self.store.results.get(number, {}).items()}

    def set_result(self, user: str, score: float, number: str = "1") -> None:
        with self.store.lock:
            self.store.results[number][user].update(resultScore=score)

    def posts(self, user: str | None = None) -> list[dict]:
        """Every score the LMS applied (to ``user``)."""
        return [s for _, s in self.store.scores if user is None or s.get("userId") == user]

    def dispatch(self, method: str, path: str, request) -> tuple[int, object, dict]:
        """Route a request to the library's token endpoint or service handler."""
        route = urlsplit(path).path
        if route == "/token" and method == "POST":
            return self._token(request)
        if route == "/jwks":
            return 200, self.conf().get_jwks(), {}
        conf = self.conf()
        if route == f"{BASE}/memberships":
            service = Roster(request, conf, self)
            return _translate(service.handle_resp(service.handle_get_members))
        rest = route[len(f"{BASE}/lineitems"):].strip("/").split("/") if route.startswith(f"{BASE}/lineitems") else None
        if rest is None:
            return 404, {"error": "no such service"}, {}
        if rest == [""]:
            service = Grades(request, conf, self)
            handler = service.handle_create_lineitem if method == "POST" else service.handle_get_lineitems
            return _translate(service.handle_resp(handler))
        service = Grades(request, conf, self, rest[0])
        handler = {("scores", "POST"): service.handle_update_score, ("results", "GET"): service.handle_get_results,
                   ("", "GET"): service.handle_get_lineitem, ("", "PUT"): service.handle_update_lineitem,
                   ("", "DELETE"): service.handle_delete_lineitem}.get(((rest + [""])[1], method))
        if handler is None:
            return 404, {"error": "no such service"}, {}
        held = handler == service.handle_update_score and self._before_score()
        answer = _translate(service.handle_resp(handler, line_item_id=rest[0]))
        if held:
            self.store.applied.set()
        return answer

    def _token(self, request) -> tuple[int, object, dict]:
        form = dict(request.form_data)
        if self.store.granted is not None:        # the registration's services: the rest is not granted
            form["scope"] = " ".join(s for s in form.get("scope", "").split() if s in self.store.granted)
        try:
            answer = self.conf().get_access_token(form)
        except (lti_errors.LtiException, lti_errors.MissingRequiredClaim, lti_errors.UnsupportedGrantType,
                jwt.PyJWTError) as exc:
            return 401, {"error": "invalid_client", "error_description": str(exc)}, {}
        self.store.tokens += 1
        return 200, answer, {}

    def _before_score(self) -> bool:
        """Count a score request; delay it, or hold it until the test releases it (True: held)."""
        with self.store.lock:
            self.store.score_requests += 1
            n = self.store.score_requests
        time.sleep(self.store.delay.get(n, 0))
        if n != self.store.hold_at:
            return False
        self.store.held.set()
        self.store.release.wait(120)
        return True


def _translate(response) -> tuple[int, object, dict]:
    """The library's Response as HTTP, as its Django adapter writes it."""
    if not 200 <= response.code < 300:
        return response.code, {"error": response.message}, {"Content-Type": response.media_type}
    result = response.result
    body = result["content"] if isinstance(result, dict) and "content" in result else result
    headers = {"Content-Type": response.media_type}
    if isinstance(result, dict) and result.get("next"):
        headers["Link"] = generate_next_link(result["next"])
    return response.code, body, headers


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _serve(self):
        platform = self.server.platform
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = HttpRequest((self.command, self.path, self.headers, body))
        try:
            code, answer, headers = platform.dispatch(self.command, self.path, request)
        except (lti_errors.LtiException, jwt.PyJWTError) as exc:   # the library's token checks raise
            code, answer, headers = 401, {"error": f"invalid token: {exc}"}, {}
        data = json.dumps(answer).encode()
        try:
            self.send_response(code)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass                           # the tool was killed while this request was held

    do_GET = do_POST = do_PUT = do_DELETE = _serve
