#!/usr/bin/env python3
"""baseline.py FILE: a straightforward Python implementation of Grade10's attribution
(papers/grade10.txt section III-D, as docs/analyses/grade10.md defines it) for the
benchmark's run (bench/grade10/g10bench --python FILE writes it): per metric, the exact
and variable demand of every 10 ms slice from the leaf phases, each one-second window
upsampled (exact demand first, then the rest in proportion to the variable demand with
caps iterated, then the background), and the usage attributed to the phases. Prints the
attributed total per metric, which must match g10bench's sum_R; no libraries beyond
the standard one."""
import sys

L = 0.01  # slice length in seconds


def fill(idx, w, K, u, R):
    """Place R among the slices idx with weight w[t] > 0 (all when w is None), capped at K."""
    parts = [t for t in idx if (w is None or w[t] > 0)]
    while R > 0 and parts:
        W = sum((1.0 if w is None else w[t]) for t in parts) * L
        lam = R / W
        sat = [t for t in parts if lam * (1.0 if w is None else w[t]) >= K - u[t]]
        if not sat:
            for t in parts:
                u[t] += lam * (1.0 if w is None else w[t])
            return 0.0
        for t in sat:
            R -= (K - u[t]) * L
            u[t] = K
        satset = set(sat)
        parts = [t for t in parts if t not in satset]
    return R


def upsample(E, V, K, C, lo, hi, u, x):
    idx = range(lo, hi)
    A = 0.0
    for t in idx:
        x[t] = min(E[t], K)
        A += x[t] * L
    if C <= A:
        s = C / A if A > 0 else 0.0
        for t in idx:
            x[t] *= s
            u[t] = x[t]
        return
    for t in idx:
        u[t] = x[t]
    R = fill(idx, V, K, u, C - A)
    if R > 0:
        fill(idx, None, K, u, R)


def main():
    rules, caps, phases, wins, blk, blocked_types = {}, {}, [], {}, [], set()
    with open(sys.argv[1]) as f:
        for line in f:
            w = line.split()
            if w[0] == "slices":
                nslices, nmet = int(w[1]), int(w[3])
            elif w[0] == "cap":
                caps[int(w[1])] = float(w[2])
            elif w[0] == "rule":
                rules[(int(w[1]), int(w[2]))] = (w[3], float(w[4]))
            elif w[0] == "blocked":
                blocked_types.add(int(w[1]))
            elif w[0] == "phase":
                phases.append((int(w[1]), int(w[2]), int(w[3])))
            elif w[0] == "win":
                wins.setdefault(int(w[1]), []).append((int(w[2]), int(w[3]), float(w[4])))
            elif w[0] == "blk":
                blk.append((int(w[1]), int(w[2])))
    n = max([p[2] for p in phases] + [wn[1] for ws in wins.values() for wn in ws]) + 1
    blocked = bytearray(n)
    for s0, s1 in blk:
        for s in range(s0, min(s1, n)):
            blocked[s] = 1
    sums = []
    for r in range(nmet):
        K = caps[r]
        E, V = [0.0] * n, [0.0] * n
        mine = []
        for t, s0, s1 in phases:
            rule = rules.get((t, r))
            if not rule:
                continue
            kind, val = rule
            arr = E if kind == "exact" else V
            active = [s for s in range(s0, s1) if not (t in blocked_types and blocked[s])]
            for s in active:
                arr[s] += val
            mine.append((kind, val, active))
        u, x = [0.0] * n, [0.0] * n
        for w0, w1, rate in wins.get(r, []):
            upsample(E, V, K, rate * (w1 - w0) * L, w0, w1, u, x)
        total = 0.0
        for kind, val, active in mine:
            for s in active:
                if kind == "exact":
                    total += val * x[s] / E[s] * L if E[s] > 0 else 0.0
                else:
                    total += val * (u[s] - x[s]) / V[s] * L if V[s] > 0 else 0.0
        sums.append(total)
    print(" ".join("sum_%d=%.10g" % (r, s) for r, s in enumerate(sums)))


if __name__ == "__main__":
    main()
