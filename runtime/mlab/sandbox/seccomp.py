"""The seccomp filter bubblewrap installs on the script (`--seccomp FD`): ptrace and the
keyring calls fail with EPERM.

A script that could ptrace its sandbox's init (pid 1 inside) could stop it, and
a stopped init never reaps the script, so the sandbox would hang until the
time limit. The kernel's keyrings (add_key, request_key, keyctl) are shared beyond
the sandbox: the session keyring is the harness's, which every script inherits,
so one script (a tree-search node) could leave a key that a later one reads.
Nothing else is refused: the filter allows every other call.

It is a classic BPF program over struct seccomp_data (nr at offset 0, arch at
offset 4), assembled here in a few lines rather than with libseccomp: the C
library is not installed everywhere, and its Python route on PyPI (pyseccomp,
a thin ctypes wrapper) still needs it, for a program of a dozen instructions. Each ABI the kernel may report for a process of
this machine is checked by its audit arch, since a syscall number means
something else in each: on x86_64 the 64-bit, x32 and i386 ABIs; on aarch64
the 64-bit and 32-bit ARM ones. A call from an ABI not in the table kills the
process (it cannot happen on these machines without a foreign binary).
"""
from __future__ import annotations

import errno
import platform
import struct

# Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
LOAD_WORD = 0x20          # BPF_LD | BPF_W | BPF_ABS
JUMP_IF_EQUAL = 0x15      # BPF_JMP | BPF_JEQ | BPF_K
RETURN = 0x06             # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
RET_KILL_PROCESS = 0x80000000
NR_OFFSET, ARCH_OFFSET = 0, 4
X32_BIT = 0x40000000

# The refused syscalls per audit arch (linux/audit.h), for each machine this filter serves:
# ptrace, then add_key, request_key and keyctl.
REFUSED_BY_MACHINE = {
    "x86_64": {0xC000003E: (101, X32_BIT | 521, 248, 249, 250, X32_BIT | 248, X32_BIT | 249, X32_BIT | 250),
               0x40000003: (26, 286, 287, 288)},          # x86_64 + x32, i386
    "aarch64": {0xC00000B7: (117, 217, 218, 219), 0x40000028: (26, 309, 310, 311)},   # aarch64, arm
}
MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


def _instruction(code: int, k: int = 0, jump_true: int = 0, jump_false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jump_true, jump_false, k)


def script_filter(machine: str | None = None) -> bytes | None:
    """The filter for this machine (or `machine`), or None where no table exists for it."""
    machine = (machine or platform.machine()).lower()
    table = REFUSED_BY_MACHINE.get(MACHINE_ALIASES.get(machine, machine))
    if table is None:
        return None
    # Layout: load arch; per arch a block [arch?, load nr, nr? ..., allow]; kill; deny.
    blocks = [(arch, numbers) for arch, numbers in table.items()]
    program = [_instruction(LOAD_WORD, ARCH_OFFSET)]
    length = 1 + sum(3 + len(numbers) for _, numbers in blocks) + 2
    deny_at = length - 1
    for arch, numbers in blocks:
        block_size = 1 + len(numbers) + 1   # after the arch test: load, tests, allow
        program.append(_instruction(JUMP_IF_EQUAL, arch, 0, block_size))
        program.append(_instruction(LOAD_WORD, NR_OFFSET))
        for number in numbers:
            here = len(program)
            program.append(_instruction(JUMP_IF_EQUAL, number, deny_at - here - 1, 0))
        program.append(_instruction(RETURN, RET_ALLOW))   # a false arch test lands past this, arch still loaded
    program.append(_instruction(RETURN, RET_KILL_PROCESS))
    program.append(_instruction(RETURN, RET_ERRNO | errno.EPERM))
    assert len(program) == length, (len(program), length)
    return b"".join(program)
