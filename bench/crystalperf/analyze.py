#!/usr/bin/env python3
"""analyze.py LONGPOLE RUNS.TSV: predict every configuration of the CrystalPerf benchmark
from the median run of every other one with `longpole whatif`, against the median of the
real runs; the baselines beside (no change, linear in the changed resource, a replay
without resource vectors, Amdahl). Prints a Markdown report (bench/RESULTS.md takes it).
"""
import csv, json, statistics, subprocess, sys

def main():
    lp, path = sys.argv[1], sys.argv[2]
    rows = list(csv.DictReader(open(path), delimiter='\t'))
    rows = [r for r in rows if r['wall_ns']]
    by = {}
    for r in rows:
        by.setdefault(r['config'], []).append(r)
    configs = list(by)
    med, rep = {}, {}
    for c, rs in by.items():
        walls = sorted(int(r['wall_ns']) for r in rs)
        med[c] = statistics.median(walls)
        rep[c] = min(rs, key=lambda r: abs(int(r['wall_ns']) - med[c]))  # the run nearest the median
    loaded = sum(int(r['loaded']) for r in rows)
    loads = [float(r['load1']) for r in rows]
    print('## CrystalPerf what-if validation\n')
    print(f'{len(rows)} runs in {len(configs)} configurations; load average (1 min) before the runs: '
          f'min {min(loads):.2f}, median {statistics.median(loads):.2f}, max {max(loads):.2f}; '
          f'**{loaded} of {len(rows)} runs made while it was above 0.5** (marked: their times are not trustworthy).\n')
    print('| config | cores | CPU quota | disk MiB/s | net Mbit/s | runs | median s | min s | max s |')
    print('|---|---|---|---|---|---|---|---|---|')
    for c in configs:
        r0 = by[c][0]
        w = [int(r['wall_ns']) / 1e9 for r in by[c]]
        print(f"| {c} | {r0['cores']} | {r0['quota_pct']} % | {r0['disk_MiBps']} | {r0['net_Mbit']} | {len(w)} | "
              f"{med[c] / 1e9:.3f} | {min(w):.3f} | {max(w):.3f} |")
    methods = ['crystalperf', 'no change', 'linear', 'replay w/o vectors', 'amdahl']
    devs = {m: [] for m in methods}
    selfs = {}
    print('\n| from | to | actual s | CrystalPerf s | dev | no change | linear | replay w/o vectors | Amdahl |')
    print('|---|---|---|---|---|---|---|---|---|')
    for a in configs:
        ra = rep[a]
        for b in configs:
            if a == b:
                continue
            rb = by[b][0]
            opts = []
            if rb['cores'] != ra['cores']:
                opts += ['--cores', rb['cores']]
            if rb['quota_pct'] != ra['quota_pct']:
                opts += ['--cpu-speed', str(int(rb['quota_pct']) / int(ra['quota_pct']))]
            if rb['disk_MiBps'] != ra['disk_MiBps']:
                opts += ['--disk-bw', rb['disk_MiBps'] + 'MiB', '--at-disk-bw', ra['disk_MiBps'] + 'MiB']
            if rb['net_Mbit'] != ra['net_Mbit']:
                opts += ['--net-bw', rb['net_Mbit'] + 'Mbit', '--at-net-bw', ra['net_Mbit'] + 'Mbit']
            if not opts:
                continue
            p = subprocess.run([lp, 'whatif', ra['trace'], '--samples', ra['samples'], '--json', '-q'] + opts,
                               capture_output=True, text=True)
            try:
                j = json.loads(p.stdout)
            except ValueError:
                print(f'| {a} | {b} | whatif failed: {p.stderr.strip()[:80]} |')
                continue
            selfs[a] = j['self_error']
            act = med[b]
            pr = {'crystalperf': j['predicted_ns'], 'no change': j['baselines']['no_change_ns'],
                  'linear': j['baselines']['linear_ns'], 'replay w/o vectors': j['baselines']['replay_without_vectors_ns'],
                  'amdahl': j['baselines']['amdahl_ns']}
            d = {m: abs(pr[m] - act) / act for m in methods}
            for m in methods:
                devs[m].append(d[m])
            print(f"| {a} | {b} | {act / 1e9:.3f} | {pr['crystalperf'] / 1e9:.3f} | **{100 * d['crystalperf']:.1f} %** | "
                  f"{100 * d['no change']:.1f} % | {100 * d['linear']:.1f} % | {100 * d['replay w/o vectors']:.1f} % | "
                  f"{100 * d['amdahl']:.1f} % |")
    print('\n| method | mean deviation | max deviation | pairs |')
    print('|---|---|---|---|')
    for m in methods:
        if devs[m]:
            print(f'| {m} | {100 * statistics.mean(devs[m]):.1f} % | {100 * max(devs[m]):.1f} % | {len(devs[m])} |')
    print('\nModel error at the recorded configuration (replay of the run against its recorded runtime): ' +
          ', '.join(f'{c} {100 * e:.2f} %' for c, e in selfs.items()) + '.')

if __name__ == '__main__':
    main()
