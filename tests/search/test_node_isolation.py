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

# One script leaves data in every channel a process can reach, another looks for it; both tests run
# them, one after the other (HOLD_S 0) or side by side: the leaver then holds its data (its queue and
# socket open) for HOLD_S seconds while the looker, started with it, waits LOOK_AFTER_S first.
COMMON = f"""
import ctypes, ctypes.util, errno, json, os, socket, time
started = time.time()
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
def write(path):
    with open(path, "w") as out:
        out.write("draft A was here")
attempt("xattr", lambda: os.setxattr(".", "user.mlab_leak", b"draft A was here"))
attempt("mode", lambda: os.chmod(".", 0o751))
attempt("times", lambda: os.utime(".", ({STAMP}, {STAMP})))
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
for ring, number in KEYRINGS.items():
    def add(number=number):
        if libc.syscall(ADD_KEY, b"user", b"mlab-leak", b"draft A was here", 16, number) < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    attempt("keyring " + ring, add)
left_at = time.time()
time.sleep(max(0.0, started + HOLD_S - time.time()))
print("LEFT " + json.dumps({{"left": left, "left_at": left_at, "ended": time.time(), "here": os.getcwd()}}))
"""

LOOKER = COMMON + """
import glob
time.sleep(LOOK_AFTER_S)
looked_at = time.time()
seen = {}
def read(path):
    try:
        return open(path).read()
    except OSError:
        return None
try:
    seen["xattr"] = os.getxattr(".", "user.mlab_leak").decode()
except OSError:
    seen["xattr"] = None
info = os.stat(".")
seen["mode"], seen["mtime"] = oct(info.st_mode & 0o7777), int(info.st_mtime)
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
if queue >= 0:
    buffer = ctypes.create_string_buffer(1 << 16)
    got = rt.mq_receive(queue, buffer, 1 << 16, None)
    seen["mqueue"] = buffer.raw[:got].decode() if got >= 0 else "a queue, empty"
else:
    seen["mqueue"] = None
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    client.connect(b"\\0mlab-leak")
    seen["abstract socket"] = "connected"
except OSError:
    seen["abstract socket"] = None
for ring, number in KEYRINGS.items():
    found = libc.syscall(KEYCTL, 10, number, b"user", b"mlab-leak", 0)   # KEYCTL_SEARCH
    seen["keyring " + ring] = found if found >= 0 else None
print("SEEN " + json.dumps({"seen": seen, "looked_at": looked_at, "here": os.getcwd()}))
"""


def drafts(search_agent, house_task, scripted, tmp_path, parallel: int, hold_s: float, look_after_s: float):
    """A search run of two drafts, the leaver's and the looker's: what the first left and what
    the second saw (the dictionaries their scripts print)."""
    agent = search_agent(parallel=parallel)
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 2})
    leaver = LEAVER.replace("HOLD_S", repr(hold_s))
    looker = LOOKER.replace("LOOK_AFTER_S", repr(look_after_s))
    SearchEngine(run, scripted([reply("A leaves data everywhere.", leaver + valid_code(800.0)),
                                reply("B looks for it.", looker + valid_code(700.0))]), agent=agent).run_until_done()
    run.close()
    nodes = sorted((r for r in read_trace(run.dir / "trace.jsonl").records if "node" in r), key=lambda r: r["node"])
    assert nodes[1]["parent"] is None   # a second draft: nothing of A is its by right
    return run, line_of(nodes[0], "LEFT "), line_of(nodes[1], "SEEN ")


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
    # one thread: the drafts run one after the other
    _, a, b = drafts(search_agent, house_task, scripted, tmp_path, parallel=1, hold_s=0.0, look_after_s=0.0)
    left, seen = a["left"], b["seen"]
    assert a["ended"] <= b["looked_at"], "the drafts did not run one after the other"
    # where the first draft could leave something, the second finds none of it
    assert left["xattr"] == "left" and seen["xattr"] is None
    assert left["mode"] == "left" and seen["mode"] != oct(0o751)
    assert left["times"] == "left" and seen["mtime"] != STAMP
    assert left["mqueue"] == "left" and seen["mqueue"] is None
    for channel in ("tmp", "shm", "nodes folder", "run folder", "abstract socket"):
        assert seen[channel] is None, (channel, seen[channel])
    for ring in ("session", "user", "user session"):
        assert seen[f"keyring {ring}"] is None, (ring, left[f"keyring {ring}"])
        assert left[f"keyring {ring}"].startswith("refused")   # the keyrings are closed to scripts


# Two drafts at once: A holds its data 5 s while B, started beside it, looks 1.5 s in (A has left it
# by then). Their times say they overlapped, so the test cannot pass because they ran one after the other.
def test_two_drafts_running_at_once_cannot_pass_data_to_each_other(house_task, search_agent, scripted, bubblewrap,
                                                                   tmp_path):
    # two threads: the drafts run side by side
    run, a, b = drafts(search_agent, house_task, scripted, tmp_path, parallel=2, hold_s=5.0, look_after_s=1.5)
    assert a["left_at"] < b["looked_at"] < a["ended"], "the drafts did not run at the same time"
    assert a["here"] != b["here"]   # folders of their own
    left, seen = a["left"], b["seen"]
    for channel in ("tmp", "shm", "slot", "mqueue", "abstract socket"):
        assert left[channel] == "left", (channel, left[channel])   # each is the draft's own ...
    for channel in ("tmp", "shm", "mqueue", "abstract socket", "nodes folder", "run folder"):
        assert seen[channel] is None, (channel, seen[channel])     # ... and its sibling sees none of it
    own = b["here"].rsplit("/", 1)[-1]
    assert seen["sibling slots"] == [] and seen["listed nodes folder"] in (None, [own]), seen   # its own slot only
    for ring in ("session", "user", "user session"):
        assert seen[f"keyring {ring}"] is None and left[f"keyring {ring}"].startswith("refused"), ring
    # the folders above a node's own are the sandbox's (refused, or a scratch copy of its own): never the run's
    assert not list(run.dir.glob("mlab-leak")) and not list((run.dir / "nodes").glob("mlab-leak"))
