#!/usr/bin/python3
"""Baseline for the foundation benchmark: the same whole-trace critical path as
`longpole cp`, computed with networkx (Debian python3-networkx) from a .lpt text trace.

It builds the same program activity graph (MODEL.md): per worker, vertices at every
activity boundary, send and receive instant; worker edges labelled by the covering
activity (gaps filled: `waiting` if a receive ends them, else `unknown`); message edges
from send to receive vertex. Waiting edges and messages received before they were sent
are left out; a virtual sink after the trace's last vertex makes networkx's
dag_longest_path return the longest path ending there, as longpole's definition says.
Prints: records, path length (ns), number of path edges, and timings as JSON.
"""
import json
import sys
import time
from collections import defaultdict

import networkx as nx


def parse(path):
    """The trace's activities by worker, and its messages (S/R halves matched)."""
    acts = defaultdict(list)      # worker -> [(start, end, type)]
    msgs = []                     # (src, send, dst, recv)
    halves_s = {}
    halves_r = []
    records = 0
    with open(path, "r", encoding="utf-8") as f:
        for line in f:
            tok = line.split()
            if not tok or tok[0].startswith("#") or tok[0] == "longpole-trace":
                continue
            k = tok[0]
            if k == "A":
                acts[tok[1]].append((int(tok[2]), int(tok[3]), tok[4]))
                records += 1
            elif k == "M":
                msgs.append((tok[1], int(tok[2]), tok[3], int(tok[4])))
                records += 1
            elif k == "S":
                halves_s[(tok[1], tok[3], tok[4])] = int(tok[2])
                records += 1
            elif k == "R":
                halves_r.append((tok[3], tok[1], tok[4], int(tok[2])))
                records += 1
    for (src, dst, mid, r) in halves_r:
        s = halves_s.get((src, dst, mid))
        if s is not None:
            msgs.append((src, s, dst, r))
    return acts, msgs, records


def build(acts, msgs):
    """The program activity graph as a networkx DiGraph, and the trace's last vertex."""
    sends = defaultdict(list)
    recvs = defaultdict(list)
    for (src, s, dst, r) in msgs:
        sends[src].append(s)
        recvs[dst].append(r)
    G = nx.DiGraph()
    workers = set(acts) | set(sends) | set(recvs)
    last = None
    for w in workers:
        a = sorted(acts[w])
        rset = set(recvs[w])
        instants = set(recvs[w]) | set(sends[w])
        for (s, e, _) in a:
            instants.add(s)
            instants.add(e)
        inst = sorted(instants)
        # covering activity per consecutive pair; uncovered = gap
        ai = 0
        for i in range(1, len(inst)):
            lo, hi = inst[i - 1], inst[i]
            while ai < len(a) and a[ai][1] < hi:
                ai += 1
            if ai < len(a) and a[ai][0] <= lo and a[ai][1] >= hi:
                typ = a[ai][2]
            else:
                typ = "waiting" if hi in rset else "unknown"
            if typ != "waiting":
                G.add_edge((w, lo), (w, hi), weight=hi - lo)
            else:
                G.add_node((w, lo))
                G.add_node((w, hi))
        if inst:
            G.add_node((w, inst[0]))
            v = (w, inst[-1])
            if last is None or v[1] > last[1]:
                last = v
    for (src, s, dst, r) in msgs:
        if r >= s:
            G.add_edge((src, s), (dst, r), weight=r - s)
    return G, last


def main(path):
    t0 = time.perf_counter()
    acts, msgs, records = parse(path)
    t1 = time.perf_counter()
    G, last = build(acts, msgs)
    t2 = time.perf_counter()
    length = 0
    nedges = 0
    if last is not None:
        G.add_edge(last, "__sink__", weight=0)
        # only the part of the graph that can reach the sink matters
        anc = nx.ancestors(G, "__sink__")
        anc.add("__sink__")
        H = G.subgraph(anc)
        p = nx.dag_longest_path(H, weight="weight")
        length = sum(H[p[i]][p[i + 1]]["weight"] for i in range(len(p) - 1))
        nedges = len(p) - 2
    t3 = time.perf_counter()
    print(json.dumps({"records": records, "total_ns": length, "path_edges": nedges,
                      "parse_s": round(t1 - t0, 3), "build_s": round(t2 - t1, 3),
                      "path_s": round(t3 - t2, 3), "total_s": round(t3 - t0, 3)}))


if __name__ == "__main__":
    main(sys.argv[1])
