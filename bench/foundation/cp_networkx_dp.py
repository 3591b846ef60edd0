#!/usr/bin/python3
"""The better networkx baseline for the foundation benchmark (issue 17): what a networkx
user would write for the whole-trace critical path once they know the graph is a DAG
with a known end. The same program activity graph as cp_networkx.py (its parse() and
build(), imported), then one longest-path dynamic program over
networkx.topological_sort: dist[v] = max(dist[u] + weight(u, v)) over v's in-edges,
with the predecessor taken kept, and the path read back from the trace's last vertex
(no ancestors() subgraph, no dag_longest_path over every vertex as the first script
does). Prints the same JSON as cp_networkx.py: records, path length (ns), path edges,
timings.
"""
import json
import os
import sys
import time

import networkx as nx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cp_networkx import build, parse  # noqa: E402


def longest_into(G, last):
    """Length and edge count of the longest path of DAG G that ends at `last`."""
    dist = {}
    pred = {}
    for v in nx.topological_sort(G):
        best = 0
        arg = None
        for u, _, w in G.in_edges(v, data="weight"):
            d = dist[u] + w
            if arg is None or d > best:
                best = d
                arg = u
        dist[v] = best
        pred[v] = arg
    n = 0
    v = last
    while pred[v] is not None:
        v = pred[v]
        n += 1
    return dist[last], n


def main(path):
    t0 = time.perf_counter()
    acts, msgs, records = parse(path)
    t1 = time.perf_counter()
    G, last = build(acts, msgs)
    t2 = time.perf_counter()
    length, nedges = longest_into(G, last) if last is not None else (0, 0)
    t3 = time.perf_counter()
    print(json.dumps({"records": records, "total_ns": length, "path_edges": nedges,
                      "parse_s": round(t1 - t0, 3), "build_s": round(t2 - t1, 3),
                      "path_s": round(t3 - t2, 3), "total_s": round(t3 - t0, 3)}))


if __name__ == "__main__":
    main(sys.argv[1])
