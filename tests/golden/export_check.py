#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Ground truth for the exports, computed from the golden truth table
(golden_test.sh writes it: count, tag, tid, operator, pipeline, function,
line, where -- one group of samples a line, sample k at (k + 1) us), and
readers' outputs turned into something comparable.

  export_check.py folded TRUTH [LEVELS [QUERIES]]
                                         the folded stacks tailor must write
  export_check.py traces                 go tool pprof -traces (stdin) as folded
  export_check.py chrome TRACE TRUTH [LEVELS [QUERIES]]
                                         the Chrome trace's slices: nested,
                                         and equal to the truth's runs
  export_check.py nested TRACE           only that X events nest per thread
  export_check.py lanes TRUTH LEVEL [QUERIES]
                                         the lanes view's runs, as its CSV rows
  export_check.py lanes-text TRUTH LEVEL COLUMN_NS [QUERIES]
                                         its text: "TID LANE" per thread, and
                                         the legend's "C=query: component"

With --queries first, TRUTH is the query truth instead (golden_test.sh
writes it from queries.golden: count, tag, tid, word, query, pipeline,
operator, function, line, where).  QUERIES: the query names kept (as
--query keeps them), separated by '|'; the samples of others end their
thread's runs.

Prints what differs; exit status 1 if anything does.
"""
import json
import sys
from collections import defaultdict

COLUMNS = {"operator": 3, "pipeline": 4, "function": 5, "line": 6}
DICT_LEVELS = ("operator", "pipeline")
QUERY_COLUMNS = {"query": 4, "pipeline": 5, "operator": 6, "function": 7, "line": 8}
QUERY_DICT_LEVELS = ("query", "pipeline", "operator")
STEP = 1000     # ns between samples
PID = 1000      # synth_profile's process


def use_queries():
    global COLUMNS, DICT_LEVELS
    COLUMNS, DICT_LEVELS = QUERY_COLUMNS, QUERY_DICT_LEVELS


def samples_of(truth, levels, keep=None):
    """Per sample, in time order: (tid, its rows at @levels, kept?)."""
    out = []
    for count, cols in truth_rows(truth):
        kept = keep is None or cols[COLUMNS["query"]] in keep
        out += [(int(cols[2]), [cols[COLUMNS[l]] for l in levels], kept)] * count
    return out


def truth_rows(path):
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            yield int(cols[0]), cols


def frames(cols, levels):
    """The frames tailor gives a sample: attributed rows, root first; the
    first bucket ([kernel], [object]) in front when no dictionary level
    was reached."""
    out, bucket, dict_reached = [], None, False
    for level in levels:
        value = cols[COLUMNS[level]]
        if value.startswith("["):
            bucket = bucket or value
            continue
        dict_reached |= level in DICT_LEVELS
        if not out or out[-1] != value:
            out.append(value)
    if not dict_reached and bucket:
        out.insert(0, bucket)
    return ";".join(out)


def print_folded(stacks):
    for stack in sorted(stacks):
        print(f"{stack} {stacks[stack]}")


def folded(truth, levels, keep=None):
    stacks = defaultdict(int)
    for count, cols in truth_rows(truth):
        if keep is None or cols[COLUMNS["query"]] in keep:
            stacks[frames(cols, levels)] += count
    print_folded(stacks)
    return 0


def traces():
    """go tool pprof -traces: per trace, labels, then value and the leaf
    frame, then the callers one a line."""
    stacks = defaultdict(int)
    value, stack = None, []

    def flush():
        if value is not None:
            stacks[";".join(reversed(stack))] += value

    for line in sys.stdin:
        line = line.rstrip("\n")
        if line.startswith("-----------+"):
            flush()
            value, stack = None, []
        elif value is None and line[:11].strip().isdigit() and len(line) > 13:
            value = int(line[:11].strip())
            stack.append(line[13:])
        elif value is not None and line.startswith(" " * 13):
            stack.append(line[13:])
    flush()
    print_folded(stacks)
    return 0


def slices_of(trace):
    with open(trace) as f:
        doc = json.load(f)
    return doc, [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def check_nesting(events):
    """Per thread, every X event lies inside the one it starts within."""
    problems = []
    by_thread = defaultdict(list)
    for e in events:
        by_thread[(e["pid"], e["tid"])].append(e)
    for thread, evs in by_thread.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] and \
                    not (stack[-1]["ts"] == e["ts"] and e["dur"] == 0):
                stack.pop()
            if stack:
                top = stack[-1]
                if e["ts"] + e["dur"] > top["ts"] + top["dur"]:
                    problems.append(f"thread {thread}: {e['name']} at {e['ts']}+{e['dur']} "
                                    f"overlaps {top['name']} at {top['ts']}+{top['dur']}")
            stack.append(e)
    return problems


def expected_runs(samples, nr_levels):
    """The runs the pass makes: per thread, consecutive samples with the
    same row at a level and those above it; a run ends at the thread's next
    sample, or a sample's time (1 us here) after its last one when the
    thread is gone longer than two.  A sample not kept (another query's)
    ends its thread's runs there."""
    step = STEP
    state, out = {}, []

    def close(st, frm, at):
        end = min(at, st["last"] + step)
        for i in range(frm, nr_levels):
            if st["open"][i] is not None:
                st["open"][i]["end"] = end
                st["open"][i] = None

    for k, (tid, rows, kept) in enumerate(samples):
        ns = k * step
        st = state.setdefault(tid, {"open": [None] * nr_levels, "last": None})
        if not kept:
            if st["last"] is not None:
                close(st, 0, ns)
            continue
        frm = 0
        if st["last"] is not None and ns <= st["last"] + 2 * step:
            while frm < nr_levels and st["open"][frm] is not None and \
                    st["open"][frm]["row"] == rows[frm]:
                frm += 1
        if st["last"] is not None:
            close(st, frm, ns)
        for i in range(nr_levels):
            if i < frm:
                st["open"][i]["samples"] += 1
            else:
                s = {"tid": tid, "level": i, "row": rows[i], "begin": ns,
                     "end": ns, "samples": 1}
                st["open"][i] = s
                out.append(s)
        st["last"] = ns
    for st in state.values():
        if st["last"] is not None:
            close(st, 0, float("inf"))
    return out


def expected_slices(truth, levels, keep=None):
    out = expected_runs(samples_of(truth, levels, keep), len(levels))

    def us(ns):
        return ns // 1000 + (1 if ns % 1000 >= 500 else 0)
    return sorted((s["tid"], levels[s["level"]], s["row"], us(s["begin"]),
                   us(s["end"]) - us(s["begin"]), s["samples"]) for s in out)


def lane_runs(truth, level, keep):
    """A lane's runs: one run level whose row is the (query, component) pair."""
    samples = [(tid, [(rows[0], rows[1])], kept)
               for tid, rows, kept in samples_of(truth, ["query", level], keep)]
    return sorted(expected_runs(samples, 1), key=lambda r: (r["tid"], r["begin"]))


def lanes(truth, level, keep):
    for r in lane_runs(truth, level, keep):
        q, c = r["row"]
        print(f"{PID},{r['tid']},{r['begin']},{r['end']},{q},{c},{r['samples']}")
    return 0


LANE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def lanes_text(truth, level, col_ns, keep):
    """Per thread, a character per column: the pair that ran longest there
    (ties to the pair with more samples), '.' where nothing ran."""
    runs = lane_runs(truth, level, keep)
    n = sum(count for count, _ in truth_rows(truth))
    span = (n - 1) * STEP + 1
    ncols = (span + col_ns - 1) // col_ns
    totals = defaultdict(int)
    for r in runs:
        totals[r["row"]] += r["samples"]
    keys = sorted(totals, key=lambda k: (-totals[k], k[0].encode(), k[1].encode()))
    index = {k: i for i, k in enumerate(keys)}
    grid = {}
    for r in runs:
        b, e = r["begin"], max(r["end"], r["begin"] + 1)
        k = index[r["row"]]
        c = b // col_ns
        while c < ncols and c * col_ns < e:
            over = min((c + 1) * col_ns, e) - max(c * col_ns, b)
            best = grid.get((r["tid"], c))
            if best is None or over > best[0] or (over == best[0] and k < best[1]):
                grid[(r["tid"], c)] = (over, k)
            c += 1
    for tid in sorted({r["tid"] for r in runs}):
        line = "".join(LANE_CHARS[grid[(tid, c)][1]] if (tid, c) in grid else "."
                       for c in range(ncols))
        print(f"{tid} {line}")
    for i, (q, c) in enumerate(keys):
        # A bucket for the query ([unknown]): the component alone names it.
        print(f"{LANE_CHARS[i]}={c}" if q.startswith("[") else f"{LANE_CHARS[i]}={q}: {c}")
    return 0


def chrome(trace, truth, levels=("operator", "function"), keep=None):
    doc, events = slices_of(trace)
    problems = check_nesting(events)
    got = sorted((e["tid"], e["cat"], e["name"], e["ts"], e["dur"], e["args"]["samples"])
                 for e in events)
    want = expected_slices(truth, list(levels), keep)
    if got != want:
        missing = [w for w in want if w not in got][:5]
        extra = [g for g in got if g not in want][:5]
        problems.append(f"slices differ: {len(got)} got, {len(want)} expected; "
                        f"missing {missing}, unexpected {extra}")
    names = {(e["pid"], e["tid"]) for e in doc["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    if names != {(e["pid"], e["tid"]) for e in events}:
        problems.append("not every thread with slices has a name")
    counters = [e for e in doc["traceEvents"] if e.get("ph") == "C"]
    total = sum(sum(e["args"].values()) for e in counters)
    if total != doc["otherData"]["samples"]:
        problems.append(f"counters sum to {total}, not {doc['otherData']['samples']}")
    for p in problems:
        print(p)
    return 1 if problems else 0


def nested(trace):
    _, events = slices_of(trace)
    problems = check_nesting(events)
    for p in problems:
        print(p)
    return 1 if problems else 0


def main(argv):
    if argv[:1] == ["--queries"]:
        use_queries()
        argv = argv[1:]

    def keep(i):
        return set(argv[i].split("|")) if len(argv) > i and argv[i] else None
    if len(argv) >= 3 and argv[0] == "lanes":
        return lanes(argv[1], argv[2], keep(3))
    if len(argv) >= 4 and argv[0] == "lanes-text":
        return lanes_text(argv[1], argv[2], int(argv[3]), keep(4))
    if len(argv) >= 4 and argv[0] == "chrome":
        return chrome(argv[1], argv[2], argv[3].split(","), keep(4))
    if len(argv) >= 2 and argv[0] == "folded":
        return folded(argv[1], argv[2].split(",") if len(argv) > 2 else
                      ["operator", "function", "line"], keep(3))
    if argv == ["traces"]:
        return traces()
    if len(argv) == 3 and argv[0] == "chrome":
        return chrome(argv[1], argv[2])
    if len(argv) == 2 and argv[0] == "nested":
        return nested(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
