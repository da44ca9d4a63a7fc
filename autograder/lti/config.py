"""The platform's registration and the tool's private key, read from files the instructor owns.

The file (TOML, default ``COURSE/lti.toml``) names the LMS (issuer, client id, token URL), the course's
service URLs (the line items and the memberships of the LMS course) and the tool's private key (a PEM
file beside it). Whoever can read the key can post grades as the course's tool, and whoever can write
the file can send the grades elsewhere, so both are refused with one line when another account can
read or write them: another owner, a group or world bit, a folder others can write, a link.
"""
from __future__ import annotations

import ipaddress
import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

CONFIG_NAME = "lti.toml"
MATCHES = ("login", "sis", "email")
MAX_CONFIG = 1 << 16
REQUIRED = ("issuer", "client_id", "token_url", "private_key", "lineitems_url", "memberships_url")
OPTIONAL = ("deployment_id", "token_audience", "match", "login_field")


class LtiConfigError(ValueError):
    """The registration file (or the key it names) cannot be used; the message says why and what to do."""


@dataclass(frozen=True)
class LtiConfig:
    """One LMS course as the tool is registered in it."""
    path: Path
    issuer: str
    client_id: str
    token_url: str
    lineitems_url: str
    memberships_url: str
    private_key: str = field(repr=False)          # PEM text: never in a message or a traceback's repr
    deployment_id: str = ""
    token_audience: str = ""                      # the token request's audience when not the token URL
    match: str = "login"                          # how a gradebook student is found among the LMS's users
    login_field: str = "ext_user_username"        # the member field holding the login (no LTI field does)


def read_config(path, *, match: str | None = None) -> LtiConfig:
    """The registration at ``path``; ``match`` overrides the file's. LtiConfigError says what is wrong."""
    path = Path(path).absolute()
    raw = read_owned(path, "LTI registration file", MAX_CONFIG)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LtiConfigError(f"{path} is not a TOML file that can be read ({exc}): see docs/how-to/lti.md") from None
    values = _values(path, data)
    key_path = (path.parent / values.pop("private_key")).absolute()
    key = read_owned(key_path, "tool's private key", MAX_CONFIG).decode("utf-8", "replace")
    _check_key(key_path, key)
    config = LtiConfig(path=path, private_key=key, **values)
    chosen = match or config.match
    if chosen not in MATCHES:
        raise LtiConfigError(f"match = {chosen!r} in {path}: choose one of {', '.join(MATCHES)}")
    return LtiConfig(**{**config.__dict__, "match": chosen})


def _values(path: Path, data: dict) -> dict:
    unknown = sorted(set(data) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise LtiConfigError(f"{path} sets {', '.join(unknown)}, which no LTI setting is called: "
                             f"the settings are {', '.join(REQUIRED + OPTIONAL)}")
    missing = [name for name in REQUIRED if not data.get(name)]
    if missing:
        raise LtiConfigError(f"{path} lacks {', '.join(missing)}: copy them from the tool's registration in the "
                             "LMS (see docs/how-to/lti.md)")
    bad = [name for name, value in data.items() if not isinstance(value, str)]
    if bad:
        raise LtiConfigError(f"{path}: {', '.join(bad)} must be quoted strings")
    for name in ("token_url", "lineitems_url", "memberships_url"):
        check_url(data[name], f"{name} in {path}")
    return {name: data[name] for name in REQUIRED + OPTIONAL if name in data}


def check_url(url: str, what: str) -> None:
    """An https URL (plain http only to this machine: a test platform on loopback)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname and _loopback(parts.hostname):
        return
    raise LtiConfigError(f"{what} is {url!r}: give the LMS's https:// URL (the key and grades must not travel "
                         "in plain text)")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_key(path: Path, pem: str) -> None:
    from jwcrypto.jwk import JWK
    try:
        key = JWK.from_pem(pem.encode("utf-8"))
    except (ValueError, TypeError) as exc:
        raise LtiConfigError(f"{path} is not a PEM private key ({exc}): make one with openssl genpkey "
                             "-algorithm RSA -pkeyopt rsa_keygen_bits:2048 (see docs/how-to/lti.md)") from None
    if not key.has_private or key.get("kty") != "RSA":
        raise LtiConfigError(f"{path} holds no RSA private key (LTI signs with RS256): give the tool's private key")


def read_owned(path: Path, what: str, limit: int) -> bytes:
    """The bytes of ``path``, a regular file of this account's that no other account can read or write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise LtiConfigError(f"no {what} at {path}: write it as docs/how-to/lti.md shows (chmod 600)") from None
    except OSError as exc:
        why = "is a symbolic link" if os.path.islink(path) else f"cannot be opened ({exc.strerror})"
        raise LtiConfigError(f"refused: the {what} {path} {why}: give the file itself, yours, mode 600") from None
    try:
        _check_owned(path, os.fstat(fd), what)
        _check_folder(path, what)
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise LtiConfigError(f"the {what} {path} is over {limit >> 10} KiB: is it the right file?")
    return data


def _check_owned(path: Path, st: os.stat_result, what: str) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise LtiConfigError(f"refused: the {what} {path} is not a regular file")
    if st.st_uid != os.geteuid():
        raise LtiConfigError(f"refused: the {what} {path} belongs to uid {st.st_uid}, not to this account "
                             f"(uid {os.geteuid()}), so another account can change it: keep your own copy, chmod 600")
    if st.st_mode & 0o077:
        who = [name for bits, name in ((0o070, "its group"), (0o007, "every account")) if st.st_mode & bits]
        raise LtiConfigError(f"refused: the {what} {path} can be read or written by {' and '.join(who)} "
                             f"(mode {stat.S_IMODE(st.st_mode):04o}): run chmod 600 {path}")


def _check_folder(path: Path, what: str) -> None:
    st = os.stat(path.parent)
    others_write = st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX
    if others_write or st.st_uid not in (os.geteuid(), 0):
        raise LtiConfigError(f"refused: the folder {path.parent} of the {what} can be changed by another account "
                             "(who could replace the file): keep it in a folder of yours that only you can write")
