"""The LTI registration file and the tool's key are read only from files no other account can read or write:
each way another account could (another owner, a group or world bit, a folder others write, a link) is
refused with one line that says what to do; a file that is right is read whole."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from lti_platform import private_pem
from autograder.lti.config import LtiConfigError, read_config

KEY = private_pem()


def write(folder: Path, **settings) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    (folder / "tool.pem").write_text(KEY)
    (folder / "tool.pem").chmod(0o600)
    values = {"issuer": "https://canvas.instructure.com", "client_id": "10000000000042",
              "token_url": "https://school.instructure.com/login/oauth2/token", "private_key": "tool.pem",
              "lineitems_url": "https://school.instructure.com/api/lti/courses/7/line_items",
              "memberships_url": "https://school.instructure.com/api/lti/courses/7/names_and_roles", **settings}
    path = folder / "lti.toml"
    path.write_text("".join(f'{k} = "{v}"\n' for k, v in values.items()))
    path.chmod(0o600)
    return path


def refused(path: Path) -> str:
    with pytest.raises(LtiConfigError) as caught:
        read_config(path)
    message = str(caught.value)
    assert "\n" not in message and "BEGIN" not in message
    return message


def test_a_registration_file_of_the_instructor_s_own_is_read(tmp_path):
    config = read_config(write(tmp_path / "mine", match="email"))
    assert (config.client_id, config.match, config.login_field) == ("10000000000042", "email", "ext_user_username")
    assert config.private_key == KEY and KEY not in repr(config)


@pytest.mark.parametrize("mode, who", [(0o640, "its group"), (0o604, "every account"), (0o620, "its group"),
                                       (0o666, "its group and every account")])
def test_a_file_another_account_can_read_or_write_is_refused(tmp_path, mode, who):
    path = write(tmp_path / "mine")
    path.chmod(mode)
    assert refused(path) == (f"refused: the LTI registration file {path} can be read or written by {who} "
                             f"(mode {mode:04o}): run chmod 600 {path}")
    path.chmod(0o600)
    (path.parent / "tool.pem").chmod(mode)
    assert refused(path).startswith(f"refused: the tool's private key {path.parent / 'tool.pem'} can be read")


def test_a_file_of_another_account_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a file to another account needs root")
    path = write(tmp_path / "mine")
    os.chown(path, 65534, 65534)
    assert refused(path).startswith(f"refused: the LTI registration file {path} belongs to uid 65534, not to this "
                                    "account (uid 0), so another account can change it")


def test_a_link_and_a_folder_others_can_write_are_refused(tmp_path):
    path = write(tmp_path / "mine")
    link = tmp_path / "link.toml"
    link.symlink_to(path)
    assert refused(link) == (f"refused: the LTI registration file {link} is a symbolic link: give the file itself, "
                             "yours, mode 600")
    path.parent.chmod(0o770)
    assert refused(path).startswith(f"refused: the folder {path.parent} of the LTI registration file can be changed")
    path.parent.chmod(0o1777)                  # sticky (like /tmp): others cannot replace a file of ours
    assert read_config(path).issuer == "https://canvas.instructure.com"


@pytest.mark.parametrize("settings, message", [
    ({"token_url": "http://lms.example.edu/token"}, "token_url in {path} is 'http://lms.example.edu/token': give "
                                                    "the LMS's https:// URL"),
    ({"colour": "blue"}, "{path} sets colour, which no LTI setting is called"),
    ({"client_id": ""}, "{path} lacks client_id: copy them from the tool's registration in the LMS"),
    ({"match": "name"}, "match = 'name' in {path}: choose one of login, sis, email"),
])
def test_a_setting_that_cannot_be_used_is_named(tmp_path, settings, message):
    path = write(tmp_path / "mine", **settings)
    assert refused(path).startswith(message.format(path=path))


def test_a_key_that_is_no_private_key_is_refused(tmp_path):
    path = write(tmp_path / "mine")
    (path.parent / "tool.pem").write_text("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")
    assert refused(path).startswith(f"{path.parent / 'tool.pem'} is not a PEM private key")
    assert refused(path.parent / "none.toml").startswith(f"no LTI registration file at {path.parent / 'none.toml'}")


def test_an_lms_that_cannot_be_reached_is_said_in_one_line(tmp_path):
    import socket

    from autograder.lti.client import LmsClient
    from autograder.lti.session import LtiError
    with socket.socket() as s:                       # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    config = read_config(write(tmp_path / "mine", token_url=f"{base}/token", lineitems_url=f"{base}/lineitems",
                               memberships_url=f"{base}/memberships"))
    with pytest.raises(LtiError) as caught:
        LmsClient(config, timeout=5).members()
    assert str(caught.value) == (f"cannot reach the LMS's token endpoint {base}/token (ConnectionError): check "
                                 "token_url and the network, then run again")
