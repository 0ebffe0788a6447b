#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""lbr_profile.py PROGRAM OUT.data ROOT,...,LEAF [SAMPLES]: a perf.data as
perf record --call-graph lbr writes it, of PROGRAM (built -no-pie), whose
every sample is chosen: its IP inside LEAF, its callchain the user
context, the IP and two frames of garbage (what a frame-pointer walk of
code without frame pointers finds), and its branch stack the LBR's call
stack (PERF_SAMPLE_BRANCH_CALL_STACK): for each call of the chain, latest
first, the call instruction in the caller (from objdump) and the callee's
entry.  perf script takes the LBR for the user's frames; so must tailor.

Prints the chain's stack, root first, as folded stacks print it.
"""
import re
import struct
import subprocess
import sys

PID = 4343
CONTEXT_USER = (1 << 64) - 512
PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME = 1, 2, 4
PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_PERIOD, PERF_SAMPLE_BRANCH_STACK = 0x20, 0x100, 0x800
PERF_SAMPLE_BRANCH_USER, PERF_SAMPLE_BRANCH_CALL_STACK = 1 << 1, 1 << 11
PERF_RECORD_COMM, PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2 = 3, 9, 10
MISC_USER = 2


def functions(program):
    """Each function's start, and the calls in it: {name: (start, [(at, callee)])}."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", program], check=True,
                         capture_output=True, text=True).stdout
    funcs, current = {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            current = m.group(2)
            funcs[current] = (int(m.group(1), 16), [])
            continue
        m = re.match(r"^ +([0-9a-f]+):\s+call\s+[0-9a-f]+ <([^>+]+)>", line)
        if m and current:
            funcs[current][1].append((int(m.group(1), 16), m.group(2)))
    return funcs


def exec_segment(program):
    """The executable LOAD segment: (vaddr, offset, memsz), page-aligned."""
    out = subprocess.run(["readelf", "-lW", program], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:]:
            offset, vaddr, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            skew = vaddr & 0xfff
            return vaddr - skew, offset - skew, memsz + skew
    sys.exit("lbr_profile: no executable segment in %s" % program)


def record(kind, misc, body):
    return struct.pack("<IHH", kind, misc, 8 + len(body)) + body


def main():
    program, out, chain = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    samples = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    funcs = functions(program)
    calls = []			# (from, to), root first
    for caller, callee in zip(chain, chain[1:]):
        at = [a for a, name in funcs[caller][1] if name == callee]
        if not at:
            sys.exit("lbr_profile: %s calls no %s" % (caller, callee))
        calls.append((at[0], funcs[callee][0]))
    leaf_ip = funcs[chain[-1]][0] + 4
    vaddr, offset, size = exec_segment(program)

    sample_type = (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK)
    flags = 1 << 5 | 1 << 9 | 1 << 18 | 1 << 23   # exclude_kernel, comm, sample_id_all, mmap2
    attr = struct.pack("<IIQQQQQ", 1, 112, 0, 100000, sample_type, 0, flags)
    attr += struct.pack("<IIQQQ", 0, 0, 0, 0, PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK)
    attr += b"\0" * (112 - len(attr))
    attr += struct.pack("<QQ", 0, 0)

    def trailer(time):
        return struct.pack("<IIQ", PID, PID, time)

    name = program.encode() + b"\0"
    name += b"\0" * (-len(name) % 8)
    data = record(PERF_RECORD_COMM, 0, struct.pack("<II16s", PID, PID, b"lbr_prog") + trailer(1))
    data += record(PERF_RECORD_MMAP2, MISC_USER,
                   struct.pack("<IIQQQIIQQII", PID, PID, vaddr, size, offset, 0, 0, 0, 0, 5, 2) +
                   name + trailer(2))
    branches = b"".join(struct.pack("<QQQ", frm, to, 0) for frm, to in reversed(calls))
    for i in range(samples):
        # A frame-pointer walk's garbage: not code of the program.
        chain_entries = [CONTEXT_USER, leaf_ip, 0x1234, 0x5678]
        body = struct.pack("<QIIQQ", leaf_ip, PID, PID, 1000 + 100 * i, 100000)
        body += struct.pack("<Q", len(chain_entries)) + struct.pack(
            "<%dQ" % len(chain_entries), *chain_entries)
        body += struct.pack("<Q", len(calls)) + branches
        data += record(PERF_RECORD_SAMPLE, MISC_USER, body)
    header = b"PERFILE2" + struct.pack("<QQ", 104, len(attr))
    header += struct.pack("<QQ", 104, len(attr)) + struct.pack("<QQ", 104 + len(attr), len(data))
    header += struct.pack("<QQ", 0, 0) + b"\0" * 32
    with open(out, "wb") as f:
        f.write(header + attr + data)
    print(";".join(chain))


main()
