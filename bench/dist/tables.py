#!/usr/bin/env python3
"""bench/dist/tables.py RESDIR TOPOS NS: the markdown tables of bench/dist/run.sh from
its runs (RESDIR/<topo>-<N>-<algo>.json: `dist kcp --json --stats`, the answer then the
distribution document; .time: mpirun's elapsed seconds)."""
import json
import os
import sys

res, topos, ns = sys.argv[1], sys.argv[2].split(), [int(n) for n in sys.argv[3].split()]


def load(topo, n, al):
    base = os.path.join(res, "%s-%d-%s" % (topo, n, al))
    if not os.path.exists(base + ".json"):
        return None
    text = open(base + ".json").read()
    _, end = json.JSONDecoder().raw_decode(text)
    d = json.loads(text[end:].strip())["distribution"]
    pr = d["per_rank"]
    f = {
        "sm": sum(r["setup"]["msgs_sent"] for r in pr), "sb": sum(r["setup"]["bytes_sent"] for r in pr),
        "qm": sum(r["query"]["msgs_sent"] for r in pr), "qb": sum(r["query"]["bytes_sent"] for r in pr),
        "req": sum(r["requests"] for r in pr), "asked": sum(1 for r in pr if r["requests"]),
        "cs": [r["cpu_setup_s"] for r in pr], "cq": [r["cpu_query_s"] for r in pr], "ce": [r["cpu_eci_s"] for r in pr],
        "wall": float(open(base + ".time").read().split()[-1]),
        "ws": d["wall_setup_s"], "wq": d["wall_query_s"],
        "deps": d.get("dependencies", 0), "rounds": d.get("rounds", 0), "fetched": d.get("hosts_fetched", 0),
    }
    # the largest reply (rank 0 receives the graph parts)
    f["q0recv"] = pr[0]["query"]["bytes_recv"]
    first = max(a + b for a, b in zip(f["cs"], f["cq"]))
    f["eci"] = max(f["ce"]) / first * 100 if first and al != "al1" else 0.0
    return f


def pct(a, b):
    return "%.1f %%" % (100.0 * (1 - a / b)) if b else "-"


print("| topology | N | algo | set-up msgs | set-up bytes | query msgs | query bytes | requests (ranks asked) "
      "| deps / rounds / fetched | CPU s set-up max / sum | CPU s query max / sum | ECI | wall s | set-up / query wall s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for topo in topos:
    for n in ns:
        for al in ("al1", "al2", "al3"):
            f = load(topo, n, al)
            if not f:
                continue
            print("| %s | %d | %s | %d | %d | %d | %d | %d (%d) | %d / %d / %d | %.3f / %.3f | %.3f / %.3f | %.1f %% | %.2f | %.3f / %.3f |" % (
                topo, n, al, f["sm"], f["sb"], f["qm"], f["qb"], f["req"], f["asked"], f["deps"], f["rounds"],
                f["fetched"], max(f["cs"]), sum(f["cs"]), max(f["cq"]), sum(f["cq"]), f["eci"], f["wall"], f["ws"], f["wq"]))
print()
print("AL3 against AL2 (\"fewer\" = 1 - AL3/AL2; the issue's target: at least 90 % fewer bytes and messages at N = 20). "
      "Query = the requests and replies of the query; first query = set-up + query (the set-up is the same for both: "
      "the ECIs, the match, the per-host graphs). CPU = the sum over the ranks of the query's CPU seconds.")
print()
print("| topology | N | query msgs AL2 / AL3 | fewer | without the N-1 ends | fewer | query bytes AL2 / AL3 | fewer "
      "| first-query msgs fewer | first-query bytes fewer | query CPU s (sum) AL2 / AL3 |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for topo in topos:
    for n in ns:
        a2, a3 = load(topo, n, "al2"), load(topo, n, "al3")
        if not a2 or not a3:
            continue
        e2, e3 = a2["qm"] - (n - 1), a3["qm"] - (n - 1)
        print("| %s | %d | %d / %d | %s | %d / %d | %s | %d / %d | %s | %s | %s | %.3f / %.3f |" % (
            topo, n, a2["qm"], a3["qm"], pct(a3["qm"], a2["qm"]), e2, e3, pct(e3, e2),
            a2["qb"], a3["qb"], pct(a3["qb"], a2["qb"]),
            pct(a3["qm"] + a3["sm"], a2["qm"] + a2["sm"]), pct(a3["qb"] + a3["sb"], a2["qb"] + a2["sb"]),
            sum(a2["cq"]), sum(a3["cq"])))
print()
print("The query's messages include the N - 1 end-of-query messages rank 0 sends to every serving rank "
      "(the same under AL2 and AL3); \"without the N-1 ends\" leaves them out: the requests and replies only.")
