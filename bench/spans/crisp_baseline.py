#!/usr/bin/env python3
"""crisp_baseline.py: the baseline of bench/spans/run.sh, in the style of CRISP
(uber-research/CRISP, Python): the same span-tree critical path and aggregation as
`longpole spans` (docs/analyses/span-critical-path.md), written plainly in Python 3
with the standard library only, reading Jaeger JSON with json.load.

usage: crisp_baseline.py FILE.json [--percentile P] [--folded]
  prints the folded stacks of percentile P (default 95: '[service] op;... mean-ns')
  with --folded, else a summary; phase timings (CPU seconds) go to stderr as key=value.

Rules (as in longpole): a span's parent is its first CHILD_OF reference in the trace,
else its first FOLLOWS_FROM one (not waited on); a CONSUMER under a PRODUCER is not
waited on either; children outside their parent are dropped, overhanging ones
clipped; the walk takes the last child to end at or before a bound (ties: earlier
start, then smaller span id); percentile sets are the ceil(n*P/100) fastest traces.
"""
import json
import math
import sys
import time

KINDS = {"server": 2, "client": 3, "producer": 4, "consumer": 5, "internal": 1}


def load(path):
    with open(path, "rb") as f:
        doc = json.load(f)
    traces = doc["data"] if isinstance(doc, dict) and "data" in doc else [doc]
    out = []
    for tr in traces:
        procs = {pid: p.get("serviceName", "") for pid, p in (tr.get("processes") or {}).items()}
        spans = []
        for s in tr["spans"]:
            sid = int(s["spanID"], 16)
            parent, follows = None, False
            refs = s.get("references") or []
            for want in ("CHILD_OF", "FOLLOWS_FROM"):
                for r in refs:
                    if r.get("refType") == want and r.get("traceID", tr["traceID"]) == tr["traceID"]:
                        parent, follows = int(r["spanID"], 16), want == "FOLLOWS_FROM"
                        break
                if parent is not None:
                    break
            kind = 0
            for t in s.get("tags") or []:
                if t.get("key") == "span.kind":
                    kind = KINDS.get(str(t.get("value")).lower(), 0)
            start = s["startTime"] * 1000
            spans.append({"id": sid, "parent": parent, "follows": follows, "kind": kind,
                          "start": start, "end": start + s["duration"] * 1000,
                          "svc": procs.get(s.get("processID"), ""), "op": s.get("operationName", "")})
        out.append(spans)
    return out


def critical_path(spans):
    """Sections [(span, start, end)] (backwards in time), latency; None if no root."""
    by_id = {s["id"]: s for s in spans}
    roots = [s for s in spans if s["parent"] is None]
    if not roots:
        return None, 0
    root = min(roots, key=lambda s: (s["start"], -(s["end"] - s["start"]), s["id"]))
    kids = {}
    for s in spans:
        if s["parent"] is not None and s["parent"] in by_id:
            kids.setdefault(s["parent"], []).append(s)
    # the tree the walk uses: waited-for children inside their (clipped) parent, clipped
    cs, ce, kept = {root["id"]: root["start"]}, {root["id"]: root["end"]}, {}
    stack = [root]
    while stack:
        p = stack.pop()
        lst = []
        for c in kids.get(p["id"], []):
            if c["follows"] or (p["kind"] == 4 and c["kind"] == 5):
                continue
            s, e, ps, pe = c["start"], c["end"], cs[p["id"]], ce[p["id"]]
            inside = s < pe if s >= ps else e > ps
            if not inside:
                continue
            cs[c["id"]], ce[c["id"]] = max(s, ps), min(e, pe)
            lst.append(c)
            stack.append(c)
        # ascending: end, then start descending, then id descending; the walk takes from the back
        lst.sort(key=lambda c: (ce[c["id"]], -cs[c["id"]], -c["id"]))
        kept[p["id"]] = lst
    sections = []
    cursor = {root["id"]: len(kept[root["id"]])}
    cur, bound = root, ce[root["id"]]
    while True:
        lst = kept[cur["id"]]
        j = cursor[cur["id"]] - 1
        while j >= 0 and ce[lst[j]["id"]] > bound:
            j -= 1
        if j >= 0:
            c = lst[j]
            cursor[cur["id"]] = j
            if ce[c["id"]] < bound:
                sections.append((cur, ce[c["id"]], bound))
            cur, bound = c, ce[c["id"]]
            cursor[c["id"]] = len(kept[c["id"]])
            continue
        if cs[cur["id"]] < bound:
            sections.append((cur, cs[cur["id"]], bound))
        if cur is root:
            break
        bound = cs[cur["id"]]
        cur = by_id[cur["parent"]]
    return sections, ce[root["id"]] - cs[root["id"]], by_id, root


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path, pct, folded = args[0], 95.0, "--folded" in args
    if "--percentile" in args:
        pct = float(args[args.index("--percentile") + 1])
    t0 = time.process_time()
    traces = load(path)
    t1 = time.process_time()
    per_trace = []  # (latency, index, {path: excl})
    for idx, spans in enumerate(traces):
        res = critical_path(spans)
        if res[0] is None:
            continue
        sections, latency, by_id, root = res
        excl = {}
        for span, a, b in sections:
            chain, s = [], span
            while True:
                chain.append("[%s] %s" % (s["svc"].replace(";", "_"), s["op"].replace(";", "_")))
                if s is root:
                    break
                s = by_id[s["parent"]]
            key = ";".join(reversed(chain))
            excl[key] = excl.get(key, 0) + (b - a)
        per_trace.append((latency, idx, excl))
    per_trace.sort(key=lambda x: (x[0], x[1]))
    n = len(per_trace)
    upto = min(n, max(1, math.ceil(n * pct / 100 - 1e-9))) if n else 0
    total = {}
    for latency, idx, excl in per_trace[:upto]:
        for k, v in excl.items():
            total[k] = total.get(k, 0) + v
    t2 = time.process_time()
    if folded:
        lines = sorted("%s %d" % (k, max(1, v // upto)) for k, v in total.items())
        sys.stdout.write("".join(l + "\n" for l in lines))
    else:
        print("traces %d, P%g set %d traces, %d call paths" % (n, pct, upto, len(total)))
    sys.stderr.write("python_load_s=%.3f python_cp_agg_s=%.3f traces=%d spans=%d\n"
                     % (t1 - t0, t2 - t1, n, sum(len(t) for t in traces)))


if __name__ == "__main__":
    main()
