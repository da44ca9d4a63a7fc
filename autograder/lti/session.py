"""The HTTP session under pylti1p3: every request has a deadline, every answer a size limit, and the token
endpoint's grants (the scopes the LMS gave, how long the token lives) are kept for the client to check.

pylti1p3 calls ``requests`` without a timeout and reads whole bodies; the LMS is another institution's
server, so a stalled or endless answer must end the sync with a message, not hang it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import requests

from ..inert import one_line

USER_AGENT = "attention-course-lti (pylti1p3)"
CHUNK = 1 << 16


class LtiError(RuntimeError):
    """The sync cannot go on: one line that says what the LMS did and what to do."""


@dataclass(frozen=True)
class Grant:
    """What the token endpoint answered a request for ``requested`` scopes."""
    requested: frozenset
    granted: frozenset | None          # None: the answer named no scope, so all requested were granted
    expires_in: float


class BoundedSession(requests.Session):
    def __init__(self, token_url: str, *, timeout: float = 30.0, limit: int = 32 << 20, total: float = 300.0):
        super().__init__()
        self.headers["User-Agent"] = USER_AGENT
        self.token_url, self.timeout, self.limit, self.total = token_url, timeout, limit, total
        self.grants: list[Grant] = []

    def send(self, request, **kwargs):
        kwargs["stream"] = True
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        response = super().send(request, **kwargs)
        response._content = self._read(response, request.url)   # requests keeps a body it has read here
        if request.url == self.token_url and response.ok:
            self.grants.append(_grant(request.body, response))
        return response

    def _read(self, response, url: str) -> bytes:
        body, deadline = bytearray(), time.monotonic() + self.total
        try:
            for chunk in response.iter_content(CHUNK):
                body += chunk
                if len(body) > self.limit:
                    raise LtiError(f"the LMS's answer from {one_line(url)} is over {self.limit >> 20} MiB: "
                                   "is the URL the LMS's LTI service?")
                if time.monotonic() > deadline:
                    raise LtiError(f"the LMS's answer from {one_line(url)} took over {self.total:.0f} s: "
                                   "try again later")
        finally:
            response.close()
        return bytes(body)


def _grant(body, response) -> Grant:
    form = parse_qs(body.decode() if isinstance(body, bytes) else body or "")
    requested = frozenset(" ".join(form.get("scope", [""])).split())
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    scope = answer.get("scope")
    granted = frozenset(scope.split()) if isinstance(scope, str) else None
    lifetime = answer.get("expires_in")
    lifetime = float(lifetime) if isinstance(lifetime, (int, float)) and lifetime > 0 else 3600.0
    return Grant(requested, granted, lifetime)


def next_page(headers, url: str, first: str) -> str | None:
    """The ``rel="next"`` link of an answer (RFC 8288, quoted or not), on the same origin as ``first``: a
    link elsewhere would carry the bearer token to another server."""
    value = next((v for k, v in headers.items() if k.lower() == "link"), "")
    links = [link for link in requests.utils.parse_header_links(value) if link.get("rel", "").lower() == "next"]
    if not links or not links[0].get("url"):
        return None
    target = links[0]["url"]
    here, there = urlsplit(first), urlsplit(target)
    if (here.scheme, here.netloc) != (there.scheme, there.netloc):
        raise LtiError(f"the LMS's next page for {one_line(url)} is on another server ({one_line(target)[:200]}): "
                       "refused, the token would go with it")
    return target
