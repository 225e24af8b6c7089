"""Tree-search nodes are isolated from each other in the sandbox: a draft that leaves data in every
channel it can reach — its folder's extended attributes, mode and times, a POSIX message queue, the
user and session keyrings — leaves nothing that the draft after it, run in the same thread, sees.
What a node gets is its parent's files, nothing else."""
from __future__ import annotations

import json
import platform

import pytest

from mlab.run.folder import Run
from mlab.sandbox import runner
from mlab.search.engine import SearchEngine
from mlab.trace import read_trace

from needs import missing
from search_helpers import reply, valid_code

# add_key and keyctl by machine (the test's scripts call them through libc's syscall())
KEY_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}
STAMP = 123456789   # the times the first draft gives its folder

COMMON = f"""
import ctypes, ctypes.util, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {KEY_CALLS.get(platform.machine(), (0, 0))!r}
KEYRINGS = {{"session": -3, "user": -4, "user session": -5}}
libc.syscall.restype = ctypes.c_long
def mq_library():
    for name in (None, ctypes.util.find_library("rt")):
        library = ctypes.CDLL(name, use_errno=True)
        if hasattr(library, "mq_open"):
            return library
rt = mq_library()
rt.mq_open.restype = ctypes.c_int
"""

LEAVER = COMMON + f"""
left = {{}}
def attempt(channel, act):
    try:
        act()
        left[channel] = "left"
    except OSError as problem:
        left[channel] = "refused: " + str(problem)
attempt("xattr", lambda: os.setxattr(".", "user.mlab_leak", b"draft 1 was here"))
attempt("mode", lambda: os.chmod(".", 0o751))
attempt("times", lambda: os.utime(".", ({STAMP}, {STAMP})))
def mqueue():
    queue = rt.mq_open(b"/mlab-leak", os.O_CREAT | os.O_RDWR, 0o666, None)
    if queue < 0 or rt.mq_send(queue, b"draft 1 was here", 16, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
attempt("mqueue", mqueue)
for ring, number in KEYRINGS.items():
    def add(number=number):
        if libc.syscall(ADD_KEY, b"user", b"mlab-leak", b"draft 1 was here", 16, number) < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    attempt("keyring " + ring, add)
print("LEFT " + json.dumps(left))
"""

LOOKER = COMMON + """
seen = {}
try:
    seen["xattr"] = os.getxattr(".", "user.mlab_leak").decode()
except OSError:
    seen["xattr"] = None
info = os.stat(".")
seen["mode"], seen["mtime"] = oct(info.st_mode & 0o7777), int(info.st_mtime)
queue = rt.mq_open(b"/mlab-leak", os.O_RDONLY | os.O_NONBLOCK, 0, None)
if queue >= 0:
    buffer = ctypes.create_string_buffer(1 << 16)
    got = rt.mq_receive(queue, buffer, 1 << 16, None)
    seen["mqueue"] = buffer.raw[:got].decode() if got >= 0 else "a queue, empty"
else:
    seen["mqueue"] = None
for ring, number in KEYRINGS.items():
    found = libc.syscall(KEYCTL, 10, number, b"user", b"mlab-leak", 0)   # KEYCTL_SEARCH
    seen["keyring " + ring] = found if found >= 0 else None
print("SEEN " + json.dumps(seen))
"""


def line_of(record, prefix: str) -> dict:
    line = next(line for line in record["observation"].splitlines() if line.startswith(prefix))
    return json.loads(line[len(prefix):])


@pytest.fixture
def bubblewrap(monkeypatch):
    monkeypatch.delenv(runner.NO_SANDBOX_VARIABLE, raising=False)
    usable, reason = runner.sandbox_available()
    if not usable:
        missing(f"no sandbox here: {reason}")
    if platform.machine() not in KEY_CALLS:
        pytest.skip(f"no syscall numbers for {platform.machine()} in this test")


def test_a_draft_sees_nothing_an_earlier_draft_left_in_any_channel(house_task, search_agent, scripted, bubblewrap,
                                                                 tmp_path):
    agent = search_agent(parallel=1)   # one thread: the drafts run one after the other
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 2})
    SearchEngine(run, scripted([reply("A leaves data everywhere.", LEAVER + valid_code(800.0)),
                                reply("B looks for it.", LOOKER + valid_code(700.0))]), agent=agent).run_until_done()
    run.close()
    nodes = sorted((r for r in read_trace(run.dir / "trace.jsonl").records if "node" in r), key=lambda r: r["node"])
    left, seen = line_of(nodes[0], "LEFT "), line_of(nodes[1], "SEEN ")
    assert nodes[1]["parent"] is None   # a second draft: nothing of A is its by right
    # where the first draft could leave something, the second finds none of it
    assert left["xattr"] == "left" and seen["xattr"] is None
    assert left["mode"] == "left" and seen["mode"] != oct(0o751)
    assert left["times"] == "left" and seen["mtime"] != STAMP
    assert left["mqueue"] == "left" and seen["mqueue"] is None
    for ring in ("session", "user", "user session"):
        assert seen[f"keyring {ring}"] is None, (ring, left[f"keyring {ring}"])
        assert left[f"keyring {ring}"].startswith("refused")   # the keyrings are closed to scripts
