#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""kernel_chains.py OUT.data OUT.kallsyms [OUT.rec]: a perf.data of kernel
call stacks whose every frame is chosen, and the kallsyms file that names
them, for golden_test.sh; with OUT.rec, the same samples as tailor record
--call-graph fp writes them: each stack once in a STACK record, the
samples naming theirs by id, the kernel's symbols in a KALLSYMS record.

A callchain (perf record -g) gives the sample's IP and, after it, return
addresses -- except where the kernel's unwinder crossed an interrupt or
exception: the entry below the entry stub (asm_sysvec_*, asm_exc_*) is the
IP the stub saved, an interrupted instruction.  Three samples, each shape
once:

  interrupted: a timer interrupt at read_zero's first instruction.  Named
    one byte back as a return address would be, it would fall in the
    padding before it (__pfx_read_zero); the frame is read_zero's.
  returned:    a return address at next_function's first byte, after the
    call that ends ends_in_call (a call to a function that does not
    return).  The call is in ends_in_call; perf, which names every
    entry by its address, says next_function.
  thunked:     a frame at write_null's first byte, after the padding
    before it (__pfx_write_null), under the return thunk it jumped to
    (srso_return_thunk): one byte back is padding, which holds no call,
    so the frame is write_null's, as perf names it (seen on 6.18).

The expected stacks (root first) are printed, one a line.
"""
import struct
import sys

KALLSYMS = [
    (0xffffffff81000000, "T", "_text"),
    (0xffffffff81001000, "T", "vfs_read"),
    (0xffffffff81001ff0, "t", "__pfx_read_zero"),
    (0xffffffff81002000, "t", "read_zero"),
    (0xffffffff81002100, "T", "asm_sysvec_apic_timer_interrupt"),
    (0xffffffff81002200, "T", "sysvec_apic_timer_interrupt"),
    (0xffffffff81002300, "T", "run_timer_softirq"),
    (0xffffffff81003000, "T", "ends_in_call"),
    (0xffffffff81003100, "T", "next_function"),
    (0xffffffff810031f0, "t", "__pfx_write_null"),
    (0xffffffff81003200, "t", "write_null"),
    (0xffffffff81003300, "T", "srso_return_thunk"),
    (0xffffffff81004000, "T", "entry_SYSCALL_64_after_hwframe"),
    (0xffffffff81004100, "T", "do_syscall_64"),
    (0xffffffff81005000, "T", "_etext"),
]
CONTEXT_KERNEL = (1 << 64) - 128
PID = 4242

# Leaf first, as the kernel writes them.
CHAINS = [
    ([0xffffffff81002340,          # run_timer_softirq: the sample's IP
      0xffffffff81002220,          # sysvec_apic_timer_interrupt (returns to)
      0xffffffff81002110,          # asm_sysvec_apic_timer_interrupt
      0xffffffff81002000,          # read_zero+0: interrupted, not returned to
      0xffffffff81001040,          # vfs_read
      0xffffffff81004140,          # do_syscall_64
      0xffffffff81004010],         # entry_SYSCALL_64_after_hwframe
     "entry_SYSCALL_64_after_hwframe;do_syscall_64;vfs_read;read_zero;"
     "asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;run_timer_softirq"),
    ([0xffffffff81002350,          # run_timer_softirq
      0xffffffff81003100,          # next_function+0: the call ending ends_in_call
      0xffffffff81004140,
      0xffffffff81004010],
     "entry_SYSCALL_64_after_hwframe;do_syscall_64;ends_in_call;run_timer_softirq"),
    ([0xffffffff81003310,          # srso_return_thunk, jumped to from write_null's end
      0xffffffff81003200,          # write_null+0: the thunk's frame, not a return address
      0xffffffff81001040,          # vfs_read
      0xffffffff81004140,
      0xffffffff81004010],
     "entry_SYSCALL_64_after_hwframe;do_syscall_64;vfs_read;write_null;srso_return_thunk"),
]

PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME = 1, 2, 4
PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_PERIOD = 0x20, 0x100
PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_SAMPLE = 1, 3, 9
MISC_KERNEL = 1


def attr():
    # perf_event_attr as PERF_ATTR_SIZE_VER5 (112 bytes): cpu-clock.
    flags = 1 << 9 | 1 << 18                # comm, sample_id_all
    a = struct.pack("<IIQQQQQ", 1, 112, 0, 100000,
                    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN, 0, flags)
    a += b"\0" * (112 - len(a))
    return a + struct.pack("<QQ", 0, 0)     # and its ids: none


def record(kind, misc, body):
    return struct.pack("<IHH", kind, misc, 8 + len(body)) + body


def tlr_record(kind, payload):
    payload += b"\0" * (-len(payload) % 8)
    return struct.pack("<II", kind, 8 + len(payload)) + payload


def write_recording(path):
    """Format 3: META, one STACK a chain, the samples (unpacked), KALLSYMS, END."""
    TLR_META, TLR_SAMPLES, TLR_END, TLR_KALLSYMS, TLR_STACK = 1, 2, 6, 12, 13
    TAILOR_CFG_CALLCHAIN, TAILOR_SF_KERNEL = 0x200, 1
    meta = ("format=tailor-recording 3\ntool=kernel_chains.py\nevent=cpu-clock\n"
            "source_used=timer\ntimer_period_ns=1000000\nregs_mask=0x0\nnr_regs=0\n"
            "record_size=32\nflags_used=0x%x\ntarget=command\npid=%d\n"
            "tsc_mult=1\ntsc_shift=0\ncallchain_max=32\n" % (TAILOR_CFG_CALLCHAIN, PID))
    out = b"TAILORRC" + struct.pack("<IIQQ", 3, 32, 0, 0)
    out += tlr_record(TLR_META, meta.encode())
    samples = b""
    for i, (chain, _) in enumerate(CHAINS):
        entries = [CONTEXT_KERNEL] + chain
        out += tlr_record(TLR_STACK, struct.pack("<II", i + 1, len(entries)) +
                          struct.pack("<%dQ" % len(entries), *entries))
        who = PID | PID << 22 | TAILOR_SF_KERNEL << 57
        samples += struct.pack("<QQQQ", 2000 + 1000 * i, chain[0], who, i + 1)
    out += tlr_record(TLR_SAMPLES, struct.pack("<II", 32, len(CHAINS)) + samples)
    out += tlr_record(TLR_KALLSYMS, "".join("%016x %s %s\n" % k for k in KALLSYMS).encode())
    out += tlr_record(TLR_END, b"stop_tsc=10000\nreason=target-exited\nsamples=%d\n" % len(CHAINS))
    with open(path, "wb") as f:
        f.write(out)


def main():
    out, kallsyms = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        write_recording(sys.argv[3])
    with open(kallsyms, "w") as f:
        for addr, t, name in KALLSYMS:
            f.write("%016x %s %s\n" % (addr, t, name))
    # The kernel's map, as perf record writes it: perf names kernel IPs
    # only in a map.
    name = b"[kernel.kallsyms]_text"
    name += b"\0" * (8 - len(name) % 8)
    data = record(PERF_RECORD_MMAP, MISC_KERNEL,
                  struct.pack("<IIQQQ", 0xffffffff, 0, KALLSYMS[0][0],
                              KALLSYMS[-1][0] - KALLSYMS[0][0], KALLSYMS[0][0]) +
                  name + struct.pack("<IIQ", 0xffffffff, 0, 0))
    data += record(PERF_RECORD_COMM, 0, struct.pack("<II16sIIQ", PID, PID, b"kchains",
                                                   PID, PID, 1000))
    for i, (chain, _) in enumerate(CHAINS):
        entries = [CONTEXT_KERNEL] + chain
        body = struct.pack("<QIIQQQ", chain[0], PID, PID, 2000 + 1000 * i, 100000,
                           len(entries))
        body += struct.pack("<%dQ" % len(entries), *entries)
        data += record(PERF_RECORD_SAMPLE, MISC_KERNEL, body)
    a = attr()
    header_size = 104
    header = b"PERFILE2" + struct.pack("<QQ", header_size, len(a))
    header += struct.pack("<QQ", header_size, len(a))                  # attrs
    header += struct.pack("<QQ", header_size + len(a), len(data))      # data
    header += struct.pack("<QQ", 0, 0)                                 # event types
    header += b"\0" * 32                                               # features: none
    with open(out, "wb") as f:
        f.write(header + a + data)
    for _, stack in CHAINS:
        print(stack)


main()
