"""Tree-search nodes are isolated from each other in the sandbox: a draft that leaves data in every
channel it can reach — its folder's extended attributes, mode and times, a POSIX message queue, the
user and session keyrings — leaves nothing that the draft after it, run in the same thread, sees;
and a draft running beside another (`parallel`) cannot reach it through /tmp, /dev/shm, its own or
the folders above it, a message queue, an abstract Unix socket or the keyrings while both run.
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


# Two drafts at once: A leaves data in every channel two processes on one machine share and holds it
# there (its queue and socket open) while B, started beside it, looks for it. Their times say they
# overlapped, so the test cannot pass because they ran one after the other.
SIBLING_LEAVER = COMMON + """
import socket, time
started = time.time()
left = {}
def attempt(channel, act):
    try:
        act()
        left[channel] = "left"
    except OSError as problem:
        left[channel] = "refused: " + str(problem)
def write(path):
    with open(path, "w") as out:
        out.write("draft A was here")
attempt("tmp", lambda: write("/tmp/mlab-leak"))
attempt("shm", lambda: write("/dev/shm/mlab-leak"))
attempt("slot", lambda: write("mlab-leak"))
attempt("nodes folder", lambda: write("../mlab-leak"))
attempt("run folder", lambda: write("../../mlab-leak"))
def mqueue():
    queue = rt.mq_open(b"/mlab-leak", os.O_CREAT | os.O_RDWR, 0o666, None)
    if queue < 0 or rt.mq_send(queue, b"draft A was here", 16, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
attempt("mqueue", mqueue)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
attempt("abstract socket", lambda: (server.bind(b"\\0mlab-leak"), server.listen(4)))
def add():
    if libc.syscall(ADD_KEY, b"user", b"mlab-leak", b"draft A was here", 16, -4) < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
attempt("keyring", add)
left_at = time.time()
time.sleep(max(0.0, started + 5.0 - time.time()))   # held while B looks
print("LEFT " + json.dumps({"left": left, "left_at": left_at, "ended": time.time(), "here": os.getcwd()}))
"""

SIBLING_LOOKER = COMMON + """
import glob, socket, time
time.sleep(1.5)   # A has left its data by now (both started at once)
looked_at = time.time()
seen = {}
def read(path):
    try:
        return open(path).read()
    except OSError:
        return None
seen["tmp"] = read("/tmp/mlab-leak")
seen["shm"] = read("/dev/shm/mlab-leak")
seen["nodes folder"] = read("../mlab-leak")
seen["run folder"] = read("../../mlab-leak")
seen["sibling slots"] = [path for path in glob.glob(os.path.join(os.path.dirname(os.getcwd()), "*", "mlab-leak"))]
try:
    seen["listed nodes folder"] = sorted(os.listdir(".."))
except OSError:
    seen["listed nodes folder"] = None
queue = rt.mq_open(b"/mlab-leak", os.O_RDONLY | os.O_NONBLOCK, 0, None)
seen["mqueue"] = None if queue < 0 else "a queue"
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    client.connect(b"\\0mlab-leak")
    seen["abstract socket"] = "connected"
except OSError:
    seen["abstract socket"] = None
found = libc.syscall(KEYCTL, 10, -4, b"user", b"mlab-leak", 0)   # KEYCTL_SEARCH of the user keyring
seen["keyring"] = found if found >= 0 else None
print("SEEN " + json.dumps({"seen": seen, "looked_at": looked_at, "here": os.getcwd()}))
"""


def test_two_drafts_running_at_once_cannot_pass_data_to_each_other(house_task, search_agent, scripted, bubblewrap,
                                                                   tmp_path):
    agent = search_agent(parallel=2)   # two threads: the drafts run side by side
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 2})
    SearchEngine(run, scripted([reply("A leaves data everywhere.", SIBLING_LEAVER + valid_code(800.0)),
                                reply("B looks for it.", SIBLING_LOOKER + valid_code(700.0))]),
                 agent=agent).run_until_done()
    run.close()
    nodes = sorted((r for r in read_trace(run.dir / "trace.jsonl").records if "node" in r), key=lambda r: r["node"])
    a, b = line_of(nodes[0], "LEFT "), line_of(nodes[1], "SEEN ")
    assert a["left_at"] < b["looked_at"] < a["ended"], "the drafts did not run at the same time"
    assert a["here"] != b["here"]   # folders of their own
    left, seen = a["left"], b["seen"]
    for channel in ("tmp", "shm", "slot", "mqueue", "abstract socket"):
        assert left[channel] == "left", (channel, left[channel])   # each is the draft's own ...
    for channel in ("tmp", "shm", "mqueue", "abstract socket", "keyring", "nodes folder", "run folder"):
        assert seen[channel] is None, (channel, seen[channel])     # ... and its sibling sees none of it
    own = b["here"].rsplit("/", 1)[-1]
    assert seen["sibling slots"] == [] and seen["listed nodes folder"] in (None, [own]), seen   # its own slot only
    assert left["keyring"].startswith("refused")
    # the folders above a node's own are the sandbox's (refused, or a scratch copy of its own): never the run's
    assert not list(run.dir.glob("mlab-leak")) and not list((run.dir / "nodes").glob("mlab-leak"))
