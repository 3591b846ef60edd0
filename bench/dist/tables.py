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

# ---- against the targets, at the largest N ------------------------------------------
big = max(ns)
print()
print("**Against the issue's targets** (AL3 at least 90 %% fewer bytes and messages than AL2 at N = 20; here N = %d):" % big)
print()
for topo in topos:
    a2, a3 = load(topo, big, "al2"), load(topo, big, "al3")
    if not a2 or not a3:
        continue
    e2, e3 = a2["qm"] - (big - 1), a3["qm"] - (big - 1)
    ok = lambda a, b: "met" if b and 1 - a / b >= 0.9 else "not met"
    print("- %s: query messages %s fewer (%s), %s fewer without the end messages (%s); query bytes %s fewer (%s); "
          "first query (set-up + query): messages %s fewer, bytes %s fewer. AL3 asked %d rank(s), AL2 all %d." % (
              topo, pct(a3["qm"], a2["qm"]), ok(a3["qm"], a2["qm"]), pct(e3, e2), ok(e3, e2),
              pct(a3["qb"], a2["qb"]), ok(a3["qb"], a2["qb"]),
              pct(a3["qm"] + a3["sm"], a2["qm"] + a2["sm"]), pct(a3["qb"] + a3["sb"], a2["qb"] + a2["sb"]),
              a3["asked"], a2["asked"]))
eci = ["%s %.1f / %.1f %%" % (t, load(t, big, "al2")["eci"], load(t, big, "al3")["eci"])
       for t in topos if load(t, big, "al2") and load(t, big, "al3")]
print("- ECI overhead (CPU of making and merging the ECIs over the first query's CPU, slowest rank; AL2 / AL3, "
      "which build the same ECIs) at N = %d: %s; the issue's target is < 2 %%. Rank 0's merge (the match over "
      "every host's skeleton) grows with the packets of all hosts, which the all-to-all multiplies; the first "
      "query's CPU here is small (traces of 0.1-2 MB of CTF a host), so the share is large. The paper's \"subsequent "
      "query\" (a persisted graph and ECI, `--index`) is not implemented in dist kcp, so not measured." % (big, "; ".join(eci)))
print()
print("Why (cli/dkcp_query.c, src/dist/kpart.c): the query's bytes are the replies, and a reply carries the "
      "graph parts of the hosts the path needs (lp_keci_pack_part: workers, vertices at 18 bytes each, links, "
      "unmatched keys), under AL2 and AL3 alike, since both must give rank 0 the same hosts to compute the same "
      "path. What AL3 saves is AL2's broadcast: per dependency round, the requests to and the (4-byte, empty) "
      "replies from the ranks that own no needed host, and the key list (4 + 8 bytes per needed host) in each "
      "request. So AL3 saves messages in proportion to the ranks the path does not need, and bytes only in "
      "those few-byte requests and replies: with pairs (the path needs 1 peer of N - 1) the requests and replies "
      "fall from 2N to 2, but the 22 KB of the two graph parts stay; with the sequential fan-out and the "
      "all-to-all, the path needs every host, every rank owns one, and AL2's one request per rank per round is "
      "exactly AL3's set of requests: the same messages, and bytes that differ by the key lists only. "
      "Both also send the N - 1 end-of-query messages that let the serving ranks leave (a one-shot MPI job; "
      "persistent per-node servers, as in the paper, would not need them). The set-up (ECIs to rank 0, the match "
      "back to every rank, the figures) is the same for both and, for the first query, outweighs the query: the "
      "paper's 18-30 % bytes saved are of that first query. A 90 % cut in bytes would need the replies to carry "
      "less than the graph parts (e.g. only the part of a host the path crosses, or paths instead of graphs), "
      "which is a different algorithm, not a different count.")
