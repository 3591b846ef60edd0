#!/usr/bin/env bash
# test_progress.sh LONGPOLE SRCDIR: progress bars go to stderr when (and only when) it is
# a terminal. Each command runs with stderr on a pseudo-terminal (python3's pty) and
# stdout in a file: the bar of its loading or analysis phase appears (a carriage
# return, the phase's name, a percentage or a count) and is cleared at the end; stdout
# holds no trace of it. The same commands with stderr in a file, or with
# LONGPOLE_NO_PROGRESS=1 on the terminal, print no bar. Skips (77) without python3.
set -u
lp=$1; src=$2
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unset LONGPOLE_NO_PROGRESS
"$lp" generate dataflow --records 400000 --seed 2 -o "$tmp/big.lpt" 2> /dev/null || { echo "FAIL: generate"; exit 1; }
"$lp" generate requests --requests 20000 --segments 20 --seed 2 -o "$tmp/req" 2> /dev/null || { echo "FAIL: generate"; exit 1; }
python3 - "$lp" "$tmp" <<'EOF'
import os, pty, re, subprocess, sys, time
lp, d = sys.argv[1], sys.argv[2]
env = dict(os.environ)
env.pop("LONGPOLE_NO_PROGRESS", None)
# (command, the phase names one of which must show)
cases = [
    (["cp", f"{d}/big.lpt"], [b"loading"]),
    # after the bytes, the builder's last phase is named (issue 12: no bar stuck at 95%)
    (["info", f"{d}/big.lpt"], [b"building"]),
    (["check", f"{d}/big.lpt"], [b"loading", b"analysing"]),
    (["summary", "--json", "--window", "200us", "--threads", "1", f"{d}/big.lpt"], [b"windows"]),
    (["export", "--sqlite", f"{d}/out.db", f"{d}/big.lpt"], [b"activities", b"windows"]),
    (["convert", f"{d}/big.lpt", "-o", f"{d}/big.lptb"], [b"loading", b"writing"]),
    # a binary trace shows its loading and checking phases (issue 12: nothing for seconds before)
    (["info", f"{d}/big.lptb"], [b"checking"]),
    (["generate", "dataflow", "--records", "3M", "-o", f"{d}/gen.lpt"], [b"simulating", b"writing"]),
    (["generate", "dataflow", "--duration", "3s", "-o", f"{d}/gen2.lpt"], [b"simulating"]),
    (["requests", "--threads", "1", f"{d}/req.csv"], [b"reading", b"inferring", b"paths"]),
]
fails = []
# a bar rewrites its line: a carriage return not followed by a line feed (the terminal
# turns every "\n" into "\r\n", which is not one)
bar = lambda b: re.search(rb"\r(?!\n)", b) is not None

def run_pty(args, extra_env=None):
    e = dict(env)
    if extra_env:
        e.update(extra_env)
    master, slave = pty.openpty()
    with open(f"{d}/stdout", "wb") as out:
        p = subprocess.Popen([lp] + args, stdin=subprocess.DEVNULL, stdout=out, stderr=slave, env=e)
    os.close(slave)
    err = b""
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    rc = p.wait(timeout=60)
    return rc, err, open(f"{d}/stdout", "rb").read()

def run_file(args):
    with open(f"{d}/stdout", "wb") as out, open(f"{d}/stderr", "wb") as er:
        rc = subprocess.run([lp] + args, stdin=subprocess.DEVNULL, stdout=out, stderr=er, env=env, timeout=300).returncode
    return rc, open(f"{d}/stderr", "rb").read(), open(f"{d}/stdout", "rb").read()

for args, phases in cases:
    name = " ".join(args[:1])
    rc, err, out = run_pty(args)
    if rc not in (0, 1, 4):
        fails.append(f"{name}: exit {rc} on a terminal: {err[-300:]!r}")
        continue
    if not bar(err) or not any(p in err for p in phases):
        fails.append(f"{name}: no progress bar on the terminal ({phases}): {err[:300]!r}")
    elif b"%" not in err and not any(c.isdigit() for c in err.decode("latin-1")):
        fails.append(f"{name}: the bar shows no amount: {err[:300]!r}")
    if bar(err) and b"\r\x1b[K" not in err:
        fails.append(f"{name}: the bar is not cleared at the end")
    if b"\r" in out or b"\x1b[" in out:
        fails.append(f"{name}: progress on standard output")
    rc, err, out = run_file(args)
    if b"\r" in err or b"\x1b[" in err:
        fails.append(f"{name}: a progress bar with stderr in a file: {err[:200]!r}")
    rc, err, out = run_pty(args, {"LONGPOLE_NO_PROGRESS": "1"})
    if bar(err) or b"\x1b[" in err:
        fails.append(f"{name}: a progress bar with LONGPOLE_NO_PROGRESS=1: {err[:200]!r}")
for f in fails:
    print("FAIL:", f)
print(f"progress: {len(cases)} commands, {len(fails)} failures")
sys.exit(1 if fails else 0)
EOF
