#!/usr/bin/python3
"""chrome_baseline.py: the Python 3 baseline of bench/importers/run.sh.

usage: chrome_baseline.py TRACE.json

Loads a Chrome Trace Event Format file (array or {"traceEvents": [...]}) with the
standard library only and builds the same activities as longpole's chrome importer does
for the events the benchmark's generator writes: X slices and B/E pairs per (pid, tid),
Kineto's profiler span ("Trace") and cuda_sync records left out, nested slices
flattened so that each instant belongs to the innermost slice (a slice is cut where a
slice nested in it begins or ends). Timestamps are microseconds converted exactly to
integer nanoseconds (the numbers are kept as text: a double loses nanoseconds beyond
2^53). The file is streamed (json.JSONDecoder.raw_decode over 16 MB chunks), so memory
is the events, not the text.

Prints "activities N duration_sum S events E": longpole's impbench must print the same
N and S for the same file.
"""
import json
import sys
from decimal import Decimal


def ns(v):
    """Microseconds (int, or the text of a JSON number) to integer nanoseconds."""
    if isinstance(v, int):
        return v * 1000
    s = v
    if "e" in s or "E" in s:
        return int((Decimal(s) * 1000).to_integral_value())
    neg = s.startswith("-")
    if neg:
        s = s[1:]
    whole, _, frac = s.partition(".")
    frac3 = (frac + "000")[:3]
    r = int(whole or "0") * 1000 + int(frac3)
    rest = frac[3:]
    if rest and (rest[0] > "5" or (rest[0] == "5" and (rest.strip("0") != "5" or r % 2 == 1))):
        r += 1
    return -r if neg else r


def events(path):
    dec = json.JSONDecoder(parse_float=str)
    with open(path, encoding="utf-8") as f:
        buf = f.read(1 << 24)
        i = 0
        while buf[i].isspace():
            i += 1
        if buf[i] == "{":
            k = buf.find('"traceEvents"')
            i = buf.index("[", k) + 1
        else:
            i += 1
        while True:
            while True:
                while i < len(buf) and (buf[i].isspace() or buf[i] == ","):
                    i += 1
                if i < len(buf):
                    break
                more = f.read(1 << 24)
                if not more:
                    return
                buf, i = buf[i:] + more, 0
            if buf[i] == "]":
                return
            try:
                ev, j = dec.raw_decode(buf, i)
            except json.JSONDecodeError:
                more = f.read(1 << 24)
                if not more:
                    raise
                buf, i = buf[i:] + more, 0
                continue
            i = j
            yield ev


def main():
    path = sys.argv[1]
    threads = {}  # (pid, tid) -> [(start, -end, seq, end, name)]
    opened = {}   # (pid, tid) -> stack of [start, seq, name]
    kineto_cats = {"cpu_op", "Operator", "cuda_runtime", "Runtime", "cuda_driver", "kernel", "Kernel", "ac2g",
                   "gpu_memcpy", "gpu_memset", "Memcpy", "Memset", "user_annotation", "gpu_user_annotation",
                   "python_function", "cuda_sync"}
    kineto = False
    marks = []
    seq = 0
    nev = 0
    for ev in events(path):
        nev += 1
        ph = ev.get("ph")
        if ph not in ("X", "B", "E"):
            continue
        cat = ev.get("cat")
        if cat in kineto_cats:
            kineto = True
        pid = ev.get("pid", 0)
        key = (str(pid), str(ev.get("tid", pid)))
        seq += 1
        if ph == "X":
            if cat == "cuda_sync":
                continue
            s = ns(ev["ts"])
            e = s + ns(ev["dur"])
            rec = (s, -e, seq, e, ev.get("name"))
            (marks if cat == "Trace" else threads.setdefault(key, [])).append((key, rec) if cat == "Trace" else rec)
        elif ph == "B":
            opened.setdefault(key, []).append([ns(ev["ts"]), seq, ev.get("name")])
        else:
            st = opened.get(key)
            if st:
                s, q, name = st.pop()
                e = ns(ev["ts"])
                if e >= s:
                    threads.setdefault(key, []).append((s, -e, q, e, name))
    if not kineto:
        for key, rec in marks:
            threads.setdefault(key, []).append(rec)
    tmax = max((r[3] for v in threads.values() for r in v), default=0)
    for key, st in opened.items():  # never ended: closed at the end of the trace
        for s, q, name in st:
            threads.setdefault(key, []).append((s, -max(tmax, s), q, max(tmax, s), name))
    nacts = 0
    total = 0
    for recs in threads.values():
        recs.sort()
        stack = []  # [end, emitted]
        cursor = None

        def piece(top, a, b):
            nonlocal nacts, total
            if b > a or (b == a and not top[1] and top[2] == top[0]):
                nacts += 1
                total += b - a
                top[1] = True

        for s, _, _, e, _ in recs:
            while stack and stack[-1][0] <= s:
                top = stack.pop()
                piece(top, cursor, top[0])
                cursor = top[0]
            if stack:
                if e > stack[-1][0]:
                    e = stack[-1][0]
                piece(stack[-1], cursor, s)
            stack.append([e, False, s])
            cursor = s
        while stack:
            top = stack.pop()
            piece(top, cursor, top[0])
            cursor = top[0]
    print(f"activities {nacts} duration_sum {total} events {nev}")


if __name__ == "__main__":
    main()
