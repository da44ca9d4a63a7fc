"""The LMS's LTI Advantage services, as the tool calls them through pylti1p3.

pylti1p3 signs the client assertion, asks the token endpoint for a bearer token and makes each service
request (``ServiceConnector``), builds line items and scores (``LineItem``, ``Grade``) and posts them
(``AssignmentsGradesService.put_grade``). This module adds what a sync needs around it: the token is
renewed before it expires and once more when the LMS answers 401 (pylti1p3 keeps a token forever), the
scopes the LMS granted are checked against those each call needs, pages are followed by their Link header
(RFC 8288, quoted or not: pylti1p3 reads only the quoted form), and every refusal is one line.
"""
from __future__ import annotations

import time
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests

from ..inert import one_line
from .config import LtiConfig
from .session import BoundedSession, LtiError, next_page

SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_RESULT = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
AGS_SCOPES = (SCOPE_LINEITEM, SCOPE_RESULT, SCOPE_SCORE)
USES = {SCOPE_LINEITEM: "to find and create the assignment's column", SCOPE_RESULT: "to read back the LMS's scores",
        SCOPE_SCORE: "to post scores", SCOPE_NRPS: "to read the roster"}
MEDIA = {"members": "application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
         "lineitems": "application/vnd.ims.lis.v2.lineitemcontainer+json",
         "lineitem": "application/vnd.ims.lis.v2.lineitem+json",
         "results": "application/vnd.ims.lis.v2.resultcontainer+json"}
PAGE = 500                 # the page size asked for (a hint: the LMS may send fewer)
MAX_PAGES = 2000           # 1,000,000 rows at PAGE: a loop of next links ends here
MAX_ROWS = 200_000         # members, line items or results: more than any course holds


def require_library() -> None:
    """The lti extra is installed (pylti1p3 and what it brings: jwcrypto, PyJWT, requests), else one line."""
    try:
        import pylti1p3  # noqa: F401
    except ImportError:
        raise LtiError("the LTI library is not installed: pip install 'attention-course[lti]'") from None


class LmsClient:
    """One LMS course's line items, results, scores and roster."""

    def __init__(self, config: LtiConfig, *, timeout: float = 30.0):
        from pylti1p3.registration import Registration
        self.config = config
        self.session = BoundedSession(config.token_url, timeout=timeout)
        self._registration = (Registration().set_issuer(config.issuer).set_client_id(config.client_id)
                              .set_auth_token_url(config.token_url).set_tool_private_key(config.private_key)
                              .set_tool_public_key(public_pem(config.private_key)))
        if config.token_audience:
            self._registration.set_auth_audience(config.token_audience)
        self._renew()

    @property
    def tokens(self) -> int:
        """How many tokens the LMS issued to this client."""
        return len(self.session.grants)

    def _renew(self) -> None:
        from pylti1p3.service_connector import ServiceConnector
        self._connector = ServiceConnector(self._registration, self.session)      # holds no token yet
        self._renew_at: dict[frozenset, float] = {}

    def _token(self, scopes) -> None:
        """A live token for ``scopes`` (a new one when the last is near its end), granted all of them."""
        from pylti1p3.exception import LtiServiceException
        key = frozenset(scopes)
        if key in self._renew_at and time.monotonic() >= self._renew_at[key]:
            self._renew()
        before = len(self.session.grants)
        try:
            self._connector.get_access_token(list(scopes))
        except LtiServiceException as exc:
            raise LtiError(f"the LMS refused the tool a token ({_said(exc.response)}): check client_id, token_url "
                           f"and the public key registered in the LMS ({self.config.path})") from None
        except (KeyError, ValueError):
            raise LtiError(f"the LMS's token endpoint {one_line(self.config.token_url)} answered no access token: "
                           "is token_url the LMS's OAuth2 token URL?") from None
        except requests.RequestException as exc:
            raise LtiError(f"cannot reach the LMS's token endpoint {one_line(self.config.token_url)} "
                           f"({type(exc).__name__}): check token_url and the network, then run again") from None
        if len(self.session.grants) > before:
            grant = self.session.grants[-1]
            self._renew_at[key] = time.monotonic() + max(0.0, grant.expires_in - min(60.0, grant.expires_in / 10))
            missing = [s for s in scopes if grant.granted is not None and s not in grant.granted]
            if missing:
                raise LtiError("the LMS did not grant the tool " + "; ".join(f"{s} ({USES.get(s, 'needed')})"
                               for s in missing) + ": enable it in the tool's registration in the LMS (see "
                               "docs/how-to/lti.md), then run again")

    def _call(self, scopes, url: str, action):
        """``action(connector)`` with a live token; after a 401, once more with a new token."""
        from pylti1p3.exception import LtiException, LtiServiceException
        for attempt in (1, 2):
            self._token(scopes)
            try:
                return action(self._connector)
            except LtiServiceException as exc:
                if exc.response.status_code == 401 and attempt == 1:
                    self._renew()                 # the token expired or was revoked: ask for a new one
                    continue
                again = " with a new token" if attempt == 2 else ""
                raise LtiError(f"the LMS refused {one_line(url)}{again} ({_said(exc.response)}): check the tool's "
                               "registration and its services in the LMS, then run again") from None
            except requests.RequestException as exc:
                raise LtiError(f"cannot reach the LMS at {one_line(url)} ({type(exc).__name__}): check the URL and "
                               "the network, then run again (the journal keeps what was posted)") from None
            except (LtiException, ValueError) as exc:
                raise LtiError(f"the LMS's answer from {one_line(url)} cannot be read "
                               f"({one_line(exc)[:200]})") from None

    def _pages(self, scopes, url: str, media: str, rows_of) -> list:
        """Every row of a paged collection, following the Link headers (bounded in pages and rows)."""
        rows, seen, page = [], set(), with_query(url, limit=PAGE)
        while page:
            if page in seen or len(seen) >= MAX_PAGES:
                raise LtiError(f"the LMS's pages of {one_line(url)} do not end ({len(seen)} read): try again later")
            seen.add(page)
            answer = self._call(scopes, page, lambda c, p=page: c.make_service_request(list(scopes), p, accept=media))
            rows += rows_of(answer["body"], page)
            if len(rows) > MAX_ROWS:
                raise LtiError(f"the LMS sent over {MAX_ROWS} rows for {one_line(url)}: is it the right course?")
            page = next_page(answer["headers"], page, url)
        return rows

    def members(self) -> list[dict]:
        """The course's memberships (NRPS), raw: ``roster`` reads them."""
        return self._pages((SCOPE_NRPS,), self.config.memberships_url, MEDIA["members"],
                           lambda body, page: _rows(body.get("members") if isinstance(body, dict) else None, page))

    def lineitems(self, resource_id: str | None = None) -> list[dict]:
        """The course's line items (for ``resource_id``: the LMS may ignore the filter, the caller checks)."""
        url = self.config.lineitems_url
        url = with_query(url, resource_id=resource_id) if resource_id is not None else url
        return self._pages(AGS_SCOPES, url, MEDIA["lineitems"], _rows)

    def create_lineitem(self, *, label: str, maximum: float, resource_id: str, tag: str) -> dict:
        from pylti1p3.lineitem import LineItem
        item = LineItem().set_label(label).set_score_maximum(maximum).set_resource_id(resource_id).set_tag(tag)
        url = self.config.lineitems_url
        answer = self._call(AGS_SCOPES, url, lambda c: c.make_service_request(
            list(AGS_SCOPES), url, is_post=True, data=item.get_value(), content_type=MEDIA["lineitem"],
            accept=MEDIA["lineitem"]))
        body = answer["body"]
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise LtiError(f"the LMS created a line item at {one_line(url)} but sent back no id: check the LMS")
        return body

    def results(self, lineitem: str) -> list[dict]:
        return self._pages(AGS_SCOPES, service_url(lineitem, "results"), MEDIA["results"], _rows)

    def post_score(self, lineitem: str, grade) -> None:
        """One score (a pylti1p3 ``Grade``) to the line item's scores endpoint, through ``put_grade``."""
        from pylti1p3.assignments_grades import AssignmentsGradesService
        from pylti1p3.lineitem import LineItem
        data = {"scope": list(AGS_SCOPES), "lineitems": self.config.lineitems_url}
        self._call(AGS_SCOPES, service_url(lineitem, "scores"), lambda c: AssignmentsGradesService(c, data).put_grade(
            grade, LineItem({"id": lineitem})))


def _rows(body, page: str) -> list:
    if not isinstance(body, list):
        raise LtiError(f"the LMS's answer from {one_line(page)} is not a list of rows: is the URL right?")
    return [row for row in body if isinstance(row, dict)]


def _said(response) -> str:
    return f"{response.status_code}: {one_line(response.text)[:200]}" if response.text else str(response.status_code)


def with_query(url: str, **params) -> str:
    """``url`` with ``params`` added to its query (a Moodle service URL has one already)."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *((k, str(v)) for k, v in params.items())]
    return urlunsplit(parts._replace(query=urlencode(query)))


def service_url(lineitem: str, ending: str) -> str:
    """The line item's ``scores`` or ``results`` endpoint: its path with ``/ending``, its query kept."""
    parts = urlsplit(lineitem)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + ending))


def public_pem(private_pem: str) -> str:
    """The public half of the tool's key, in PEM (for pylti1p3's key id and for the LMS's registration)."""
    from jwcrypto.jwk import JWK
    return JWK.from_pem(private_pem.encode("utf-8")).export_to_pem().decode("ascii")


def public_jwk(private_pem: str) -> dict:
    """The tool's public key as the JWK the LMS asks for (Canvas: Public JWK), with its key id."""
    import json

    from jwcrypto.jwk import JWK
    key = json.loads(JWK.from_pem(private_pem.encode("utf-8")).export_public())
    return {**key, "alg": "RS256", "use": "sig"}
