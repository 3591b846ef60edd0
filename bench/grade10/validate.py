#!/usr/bin/env python3
"""validate.py LONGPOLE RUN_DIR MODEL OUT_JSON: Grade10's accuracy on a recorded run of
bench/grade10/g10work (the paper's Table II, with ground truth from per-thread CPU
clocks). RUN_DIR is a `longpole monitor` recording at 10 ms holding phases.oplog and
truth.csv (written by g10work). For each ratio k in 1, 2, 4, ..., 64 the monitoring is
downsampled (every k-th sample of each series: windows of k x 10 ms) and
  - machine-wide: the process tree's CPU rate (proc.cpu) upsampled by longpole
    (g10_segments of --sqlite) and by constant upsampling (each window's mean), both
    compared with the 10 ms monitoring: the consumption each puts in every 10 ms
    window over the run against the window's measured one:
    error = sum |estimate - truth| / sum truth (the paper's Table II);
  - per phase: the CPU seconds longpole attributes to each leaf phase (--json --phases)
    and those of a constant baseline (each window's consumption shared among the leaf
    phases active in it in proportion to their time in it), compared with the thread
    CPU time measured over the phase: error = sum |estimate - truth| / sum truth, over all
    leaves and per phase type.
Standard library only."""
import csv, json, os, sqlite3, subprocess, sys, tempfile
from collections import defaultdict

MS = 1_000_000


def read_monitor(path, keep):
    series = defaultdict(list)  # (host, metric) -> [(t, v, row)]
    with open(path) as f:
        r = csv.reader(f)
        header = next(r)
        for row in r:
            if row and row[2] in keep:
                series[(row[1], row[2])].append((int(row[0]), float(row[3]), row))
    return header, series


def downsample(header, series, k, out):
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for s in series.values():
            last = len(s) - 1
            for i, (_, _, row) in enumerate(s):
                if i % k == 0 or i == last:
                    w.writerow(row)


def windows(s):
    """(start, end, rate) of a counter series."""
    return [(s[i - 1][0], s[i][0], (s[i][1] - s[i - 1][1]) / ((s[i][0] - s[i - 1][0]) / 1e9))
            for i in range(1, len(s)) if s[i][0] > s[i - 1][0]]


def step_at(wins, grid):
    """Values of a step function [(start, end, v)] at sorted grid points (0 outside)."""
    out, j = [], 0
    for t in grid:
        while j < len(wins) and wins[j][1] <= t:
            j += 1
        out.append(wins[j][2] if j < len(wins) and wins[j][0] <= t else 0.0)
    return out


def integrals(wins, spans):
    """Integral of a step function [(start, end, rate per s)] over each [s, e) of spans (sorted)."""
    out, j = [], 0
    for (s, e) in spans:
        while j < len(wins) and wins[j][1] <= s:
            j += 1
        acc, i = 0.0, j
        while i < len(wins) and wins[i][0] < e:
            lo, hi = max(s, wins[i][0]), min(e, wins[i][1])
            if hi > lo:
                acc += wins[i][2] * (hi - lo) / 1e9
            i += 1
        out.append(acc)
    return out


def rel_err(est, truth):
    den = sum(truth)
    return sum(abs(a - b) for a, b in zip(est, truth)) / den if den > 0 else float("nan")


def leaf_name(phase, rnd, thread):
    if phase == "Compute":
        return "/Round[%s]/Compute[%s]" % (rnd, thread)
    return "/Round[%s]/Exchange[%s]/%s" % (rnd, thread, phase)


def constant_share(wins, leaves):
    """Each window's consumption shared among the leaves active in it, by overlap."""
    got = defaultdict(float)
    leaves = sorted(leaves, key=lambda p: p[1])
    for (ws, we, rate) in wins:
        ov = [(n, min(e, we) - max(s, ws)) for (n, s, e) in leaves if s < we and e > ws]
        tot = sum(o for _, o in ov)
        if tot <= 0:
            continue
        c = rate * (we - ws) / 1e9
        for n, o in ov:
            got[n] += c * o / tot
    return got


def main():
    lp, run, model, out_json = sys.argv[1:5]  # env MODE: slice (default) or event
    ratios = [int(x) for x in os.environ.get("RATIOS", "1 2 4 8 16 32 64").split()]
    header, series = read_monitor(os.path.join(run, "monitor.csv"), {"proc.cpu", "net.lo.tx_bytes"})
    cpu = next(s for (h, m), s in series.items() if m == "proc.cpu")
    truth_w = windows(cpu)
    truth = {}
    with open(os.path.join(run, "truth.csv")) as f:
        for row in csv.DictReader(f):
            truth[leaf_name(row["phase"], row["round"], row["thread"])] = (
                row["phase"], int(row["start_ns"]), int(row["end_ns"]), int(row["cpu_ns"]) / 1e9)
    t0 = min(v[1] for v in truth.values())
    t1 = max(v[2] for v in truth.values())
    # the 10 ms monitoring windows over the run: the machine-wide truth
    spans = [(a, b) for (a, b, _) in truth_w if b > t0 and a < t1]
    truth_c = [r * (b - a) / 1e9 for (a, b, r) in truth_w if b > t0 and a < t1]
    results = []
    tmp = tempfile.mkdtemp(prefix="g10val.")
    mode = os.environ.get("MODE", "slice")
    for k in ratios:
        ds = os.path.join(tmp, "mon%d.csv" % k)
        db = os.path.join(tmp, "g10_%d.db" % k)
        downsample(header, series, k, ds)
        if os.path.exists(db):
            os.unlink(db)
        p = subprocess.run([lp, "grade10", "--mode", mode, "--model", model, "--monitoring", ds, "--json", "--phases",
                            "--sqlite", db, os.path.join(run, "phases.oplog")], capture_output=True, text=True)
        if p.returncode not in (0, 4):
            sys.exit("grade10 failed at x%d: %s" % (k, p.stderr))
        doc = json.loads(p.stdout)
        con = sqlite3.connect(db)
        segs = con.execute("select s.start_ns, s.end_ns, s.usage from g10_segments s join g10_timelines t "
                           "on s.run = t.run and s.timeline = t.id join g10_resources r on r.run = t.run and "
                           "r.id = t.resource where r.name = 'cpu' order by s.start_ns").fetchall()
        con.close()
        coarse = windows([x for i, x in enumerate(cpu) if i % k == 0 or i == len(cpu) - 1])
        lp_err = rel_err(integrals(segs, spans), truth_c)
        const_err = rel_err(integrals(coarse, spans), truth_c)
        used = {}
        for ph in doc["phases"]:
            if ph["name"] in truth:
                used[ph["name"]] = ph["resources"].get("cpu", {}).get("used", 0.0)
        const = constant_share(coarse, [(n, v[1], v[2]) for n, v in truth.items()])
        per = {}
        for typ in ["all", "Compute", "Comm", "IO"]:
            names = [n for n, v in truth.items() if typ == "all" or v[0] == typ]
            tr = [truth[n][3] for n in names]
            per[typ] = {"longpole": rel_err([used.get(n, 0.0) for n in names], tr),
                        "constant": rel_err([const.get(n, 0.0) for n in names], tr),
                        "truth_cpu_s": sum(tr)}
        imb = [i for i in doc["issues"]["list"] if i["kind"] == "imbalance" and i["type"] == "/Round/Compute"]
        results.append({"mode": mode, "ratio": k, "period_ms": 10 * k, "machine": {"longpole": lp_err, "constant": const_err},
                        "phase": per, "imbalance_gain_s": imb[0]["gain_s"] if imb else None,
                        "makespan_s": doc["run"]["duration_s"], "replayed_s": doc["issues"]["replayed_s"]})
        print("x%-3d %5d ms  machine: longpole %6.2f%%  constant %6.2f%%   per phase: longpole %6.2f%%  constant %6.2f%%"
              "  (compute %5.1f%%/%5.1f%%, comm %5.1f%%/%5.1f%%, io %5.1f%%/%5.1f%%)" % (
                  k, 10 * k, 100 * lp_err, 100 * const_err, 100 * per["all"]["longpole"], 100 * per["all"]["constant"],
                  100 * per["Compute"]["longpole"], 100 * per["Compute"]["constant"], 100 * per["Comm"]["longpole"],
                  100 * per["Comm"]["constant"], 100 * per["IO"]["longpole"], 100 * per["IO"]["constant"]),
              flush=True)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    with open(out_json, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
