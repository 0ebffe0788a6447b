#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""cmetric_oracle.py: GAPP's CMetric of one process's threads, from perf's
context switch records, computed the simple way -- an oracle for tailor's
parallelism view (tailor report --view parallelism), independent of its
code.  Python 3 standard library only.

Usage:
  cmetric_oracle.py [-p PID] [-i perf.data] [--perf PERF]
  cmetric_oracle.py [-p PID] --script FILE      (FILE '-': stdin)

The recording: perf record -e cpu-clock --switch-events -o perf.data -- CMD
(with -e sched:sched_waking as well: wakeups).  With -i the oracle runs
  perf script -i perf.data -F pid,tid,time,event,ip,sym,trace --ns -G \
      --show-switch-events --show-task-events --show-lost-events
itself; --script reads such output (other field sets work if pid/tid and
time lead each line and samples end in "ip sym").  -p PID: the process
whose threads count (default: the one that exec'd first in the file, i.e.
perf record's command; failing that, the first sample's).

The definition (GAPP, sections 2-4):
  - a thread is active while it is in TASK_RUNNING: running, or switched
    out preempted ("PERF_RECORD_SWITCH OUT preempt");
  - it becomes inactive when switched out blocked ("... OUT" without
    "preempt") or at its exit (PERF_RECORD_EXIT: an exiting thread's
    events are closed before its last switch, so no switch out follows);
  - it becomes active at its wakeup ("sched:sched_waking: ... pid=TID",
    by whichever thread), or else at its next switch in (without wakeup
    records its wait for a CPU looks blocked), or at its creation
    (PERF_RECORD_FORK); a wakeup that comes while it still runs (woken
    on its way to sleep) makes its next switch out, if not preempted, one
    to runnable; a wakeup after its exit, or of a thread otherwise
    active, changes nothing.  A wakeup between two recorded threads may
    be in the file twice (the kernel can fire the woken thread's
    per-task event too): the same waker, woken thread and time count
    once;
  - before its first switch, a thread was running since the file's first
    event if that switch is one out, and inactive if it is one in; a
    thread forked during the run is absent until its fork;
  - between two consecutive events, an interval dt with n > 0 active
    threads of the process adds dt / n to the CMetric of each thread
    running in it; the total CMetric is the threads' summed (what the
    slices share out, so shares add up to 1), which is the time during
    which any thread was active ("active_ns") when no active thread waits
    preempted; "global_cm_ns" is GAPP's accumulator, the sum of dt / n;
  - a running timeslice (switch in, or the start, to switch out, exit or
    the end) has the CMetric its thread gathered in it; the slice's
    samples share it in proportion to 1 / n at each sample (normalised
    to the slice's CMetric); a slice without samples goes to
    "[unsampled]".  Samples of a thread that was not running by its
    switches carry no CMetric ("samples_outside").

Prints JSON:
  {"pid": .., "begin_ns": .., "end_ns": .., "wall_ns": ..,
   "threads": [{"tid", "name", "cm_ns", "running_ns", "runnable_ns",
                "slices", "samples", "wakeups"}, ...]
                                              (in order of appearance),
   "total_cm_ns": .., "active_ns": .., "global_cm_ns": .., "switches": ..,
   "wakeups": ..,
   "samples": ..,
   "samples_outside": .., "lost": ..,
   "functions": [{"function", "cm_ns", "share", "samples"}, ...]}
                                              (most CMetric first)
Times are ns; begin/end are perf's clock; share is of total_cm_ns.
"""
import argparse
import json
import re
import subprocess
import sys

LINE = re.compile(r'^\s*(-?\d+)/(-?\d+)\s+(\d+)\.(\d+):\s*(.*?)\s*$')
TASK = re.compile(r'^PERF_RECORD_(FORK|EXIT)\((-?\d+):(-?\d+)\):\((-?\d+):(-?\d+)\)')
COMM = re.compile(r'^PERF_RECORD_COMM( exec)?: (.*):(-?\d+)/(-?\d+)$')
SAMPLE = re.compile(r'^(\S+?):\s+([0-9a-fA-F]+)(?:\s+(.*))?$')
WAKE = re.compile(r'^sched:sched_waking:.*?\bpid=(\d+)')

UNSEEN, RUNNING, RUNNABLE, BLOCKED = 'unseen', 'running', 'runnable', 'blocked'


def ns_of(sec, frac):
    return int(sec) * 1000000000 + int((frac + '000000000')[:9])


def parse(lines):
    """Records as (time, pid, tid, kind, arg), kind one of IN, OUT,
    OUTP, FORK, EXIT, COMM, EXEC, SAMPLE, LOST, WAKE (arg: the woken
    tid; pid/tid: the waker), in the file's order."""
    recs = []
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue	# callchain lines, headers
        pid, tid = int(m.group(1)), int(m.group(2))
        t = ns_of(m.group(3), m.group(4))
        rest = m.group(5)
        if rest.startswith('PERF_RECORD_SWITCH'):
            # "PERF_RECORD_SWITCH IN", "... OUT", "... OUT preempt";
            # _CPU_WIDE adds "next/prev pid/tid: P/T": the record's own
            # pid/tid is still the thread switched out or in.
            words = rest.split()
            if words[1] == 'IN':
                kind = 'IN'
            elif len(words) > 2 and words[2] == 'preempt':
                kind = 'OUTP'
            else:
                kind = 'OUT'
            recs.append((t, pid, tid, kind, None))
        elif rest.startswith('PERF_RECORD_FORK') or rest.startswith('PERF_RECORD_EXIT'):
            m2 = TASK.match(rest)
            if m2:	# the child's, or the exiting thread's, pid:tid
                recs.append((t, int(m2.group(2)), int(m2.group(3)), m2.group(1),
                             int(m2.group(5))))
        elif rest.startswith('PERF_RECORD_COMM'):
            m2 = COMM.match(rest)
            if m2:
                recs.append((t, int(m2.group(3)), int(m2.group(4)),
                             'EXEC' if m2.group(1) else 'COMM', m2.group(2)))
        elif rest.startswith('PERF_RECORD_LOST'):
            n = re.findall(r'\d+', rest)
            recs.append((t, pid, tid, 'LOST', int(n[-1]) if n else 1))
        elif rest.startswith('PERF_RECORD_'):
            continue
        elif rest.startswith('sched:'):
            m2 = WAKE.match(rest)
            if m2:
                recs.append((t, pid, tid, 'WAKE', int(m2.group(1))))
        else:
            m2 = SAMPLE.match(rest)
            if m2:
                sym = (m2.group(3) or '').strip() or '[unknown]'
                recs.append((t, pid, tid, 'SAMPLE', sym))
    return recs


def choose_pid(recs):
    for r in recs:
        if r[3] == 'EXEC':
            return r[1]
    for r in recs:
        if r[3] == 'SAMPLE':
            return r[1]
    return None


class Thread:
    def __init__(self, tid):
        self.tid = tid
        self.name = ''
        self.state = UNSEEN
        self.since = 0		# time of its last state change
        self.cm = 0.0
        self.running = 0
        self.runnable = 0
        self.wakeups = 0
        self.woken_running = False	# woken on its way to sleep
        self.exited = False
        self.slices = 0
        self.samples = 0
        self.cm_in = 0.0	# the accumulator at its switch in
        self.pending = []	# its open slice's samples: (function, 1 / n)


def compute(recs, pid):
    recs = [r for r in recs if r[0] > 0]	# synthesized records have no time
    recs.sort(key=lambda r: r[0])		# stable: ties keep the file's order
    out = {'pid': pid, 'begin_ns': 0, 'end_ns': 0, 'wall_ns': 0, 'threads': [],
           'total_cm_ns': 0.0, 'global_cm_ns': 0.0, 'switches': 0, 'samples': 0,
           'samples_outside': 0, 'lost': sum(r[4] for r in recs if r[3] == 'LOST'),
           'wakeups': 0, 'functions': []}
    if not recs:
        return out
    begin, end = recs[0][0], recs[-1][0]
    # Wakeups by any thread: those of the process's threads count.
    mine = [r for r in recs if (r[1] == pid and r[3] != 'LOST') or r[3] == 'WAKE']
    last_wake = None
    threads = {}
    order = []
    # Each thread's state before its first event.
    first = {}
    for t, p, tid, kind, _ in mine:
        if kind == 'WAKE':
            continue
        if tid not in threads:
            threads[tid] = Thread(tid)
            order.append(tid)
        if tid not in first and kind in ('IN', 'OUT', 'OUTP', 'FORK', 'EXIT'):
            first[tid] = kind
    for tid in order:
        th = threads[tid]
        k = first.get(tid)
        th.since = begin
        if k == 'FORK':
            th.state = UNSEEN
        elif k == 'IN':
            th.state = BLOCKED
        else:	# a first switch out or exit, or only samples: it was running
            th.state = RUNNING

    now = begin
    acc = 0.0		# sum of dt / n: GAPP's global_cm
    total = 0.0		# sum of dt while n > 0
    n = sum(1 for th in threads.values() if th.state in (RUNNING, RUNNABLE))
    funcs = {}

    def func(name):
        return funcs.setdefault(name, {'cm': 0.0, 'samples': 0})

    def advance(t):
        nonlocal now, acc, total
        if t > now:
            if n > 0:
                acc += (t - now) / n
                total += t - now
            now = t

    def set_state(th, state):
        nonlocal n
        if th.state == RUNNABLE:
            th.runnable += now - th.since
        if th.state == RUNNING:
            th.running += now - th.since
            cm = acc - th.cm_in
            th.cm += cm
            th.slices += 1
            wsum = sum(w for _, w in th.pending)
            if wsum > 0:
                for f, w in th.pending:
                    func(f)['cm'] += cm * w / wsum
            else:
                func('[unsampled]')['cm'] += cm
            th.pending = []
        was = th.state in (RUNNING, RUNNABLE)
        is_ = state in (RUNNING, RUNNABLE)
        n += is_ - was
        th.state = state
        th.since = now
        if state == RUNNING:
            th.cm_in = acc

    for th in threads.values():
        if th.state == RUNNING:
            th.cm_in = acc
    for t, _, tid, kind, arg in mine:
        advance(t)
        if kind == 'WAKE':
            woken = threads.get(arg)
            if (t, tid, arg) == last_wake:
                continue
            last_wake = (t, tid, arg)
            if woken:
                out['wakeups'] += 1
                woken.wakeups += 1
            if woken and not woken.exited:
                if woken.state == BLOCKED:
                    set_state(woken, RUNNABLE)
                elif woken.state == RUNNING:
                    woken.woken_running = True
            continue
        th = threads[tid]
        if kind == 'IN':
            out['switches'] += 1
            th.woken_running = False
            if th.state != RUNNING:
                set_state(th, RUNNING)
        elif kind == 'OUT':
            out['switches'] += 1
            set_state(th, RUNNABLE if th.woken_running else BLOCKED)
            th.woken_running = False
        elif kind == 'OUTP':
            out['switches'] += 1
            set_state(th, RUNNABLE)
            th.woken_running = False
        elif kind == 'FORK':
            if not th.name and arg in threads:	# a thread is named after its parent
                th.name = threads[arg].name
            if th.state in (UNSEEN, BLOCKED):
                set_state(th, RUNNABLE)
        elif kind == 'EXIT':
            set_state(th, BLOCKED)
            th.exited = True
        elif kind in ('COMM', 'EXEC'):
            th.name = arg
        elif kind == 'SAMPLE':
            out['samples'] += 1
            th.samples += 1
            if th.state == RUNNING and n > 0:
                th.pending.append((arg, 1.0 / n))
            else:
                out['samples_outside'] += 1
            func(arg)['samples'] += 1
    advance(end)
    for tid in order:
        th = threads[tid]
        if th.state in (RUNNING, RUNNABLE):
            set_state(th, BLOCKED)

    cm_sum = sum(threads[tid].cm for tid in order)
    out.update(begin_ns=begin, end_ns=end, wall_ns=end - begin,
               total_cm_ns=round(cm_sum, 1), active_ns=round(total, 1),
               global_cm_ns=round(acc, 1))
    out['threads'] = [{'tid': th.tid, 'name': th.name, 'cm_ns': round(th.cm, 1),
                       'running_ns': th.running, 'runnable_ns': th.runnable,
                       'slices': th.slices, 'samples': th.samples,
                       'wakeups': th.wakeups}
                      for th in (threads[tid] for tid in order)]
    rows = sorted(funcs.items(), key=lambda kv: (-kv[1]['cm'], kv[0]))
    out['functions'] = [{'function': f, 'cm_ns': round(v['cm'], 1),
                         'share': round(v['cm'] / cm_sum, 6) if cm_sum > 0 else 0.0,
                         'samples': v['samples']} for f, v in rows]
    return out


def main():
    ap = argparse.ArgumentParser(description='CMetric of a process\'s threads from perf switch records')
    ap.add_argument('-p', '--pid', type=int, help='the process (default: the command perf recorded)')
    ap.add_argument('-i', '--input', default='perf.data', help='perf.data to run perf script on')
    ap.add_argument('--perf', default='perf', help='the perf binary')
    ap.add_argument('--script', help='perf script output to read instead ("-": stdin)')
    args = ap.parse_args()

    if args.script == '-':
        lines = sys.stdin.read().splitlines()
    elif args.script:
        with open(args.script, encoding='utf-8', errors='replace') as f:
            lines = f.read().splitlines()
    else:
        cmd = [args.perf, 'script', '-i', args.input, '-F', 'pid,tid,time,event,ip,sym,trace',
               '--ns', '-G', '--show-switch-events', '--show-task-events',
               '--show-lost-events']
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, errors='replace')
        if p.returncode:
            sys.stderr.write(p.stderr)
            sys.exit('cmetric_oracle: %s failed' % ' '.join(cmd))
        lines = p.stdout.splitlines()
    recs = parse(lines)
    pid = args.pid if args.pid is not None else choose_pid(recs)
    if pid is None:
        sys.exit('cmetric_oracle: no process found (no exec, no sample); give -p')
    out = compute(recs, pid)
    if not out['switches']:
        sys.stderr.write('cmetric_oracle: no switch records of process %d '
                         '(recorded without --switch-events?)\n' % pid)
    if out['lost']:
        sys.stderr.write('cmetric_oracle: %d events lost: figures are off\n' % out['lost'])
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
