#!/usr/bin/env python3
"""check_layers.py: dependencies in liblongpole only point down.

Reads the layer order from src/LAYERS, finds the layer of every file under src/,
include/longpole/ and cli/ from its path, resolves each of its #include "..." lines to
a file of the tree, and fails when a file includes a header of a higher layer or of a
sibling analysis. Also fails on a cycle of includes between headers.

  check_layers.py ROOT          check the tree at ROOT (exit 1 and one line per violation)
  check_layers.py --self-test   check that an upward include, a sibling include and an
                                include cycle are each caught, in a scratch copy
"""
import os, re, shutil, sys, tempfile

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layers(root):
    ranks, wild = {}, {}
    r = 0
    with open(os.path.join(root, 'src', 'LAYERS')) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            if line.endswith('/*'):
                wild[line[:-2]] = r
            else:
                ranks[line] = r
            r += 1
    return ranks, wild


def layer_of(rel, ranks, wild):
    """(layer name, rank) of a path relative to the root, or None if not layered."""
    parts = rel.split('/')
    if parts[0] == 'cli':
        return 'cli', ranks['cli']
    if parts[0] == 'src':
        parts = parts[1:]
    elif parts[:2] == ['include', 'longpole']:
        parts = parts[2:]
        if len(parts) == 1:           # the umbrella header longpole.h: for the CLI and users
            return 'umbrella', ranks['cli'] - 0.5
    else:
        return None
    for n in (2, 1):
        name = '/'.join(parts[:n])
        if len(parts) > n and name in ranks:
            return name, ranks[name]
    if len(parts) > 2 and parts[0] in wild:
        return parts[0] + '/' + parts[1], wild[parts[0]]
    return None


def resolve(root, rel, inc):
    for base in (os.path.dirname(rel), 'src', 'include', 'cli'):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def check(root):
    ranks, wild = read_layers(root)
    files = []
    for top in ('src', 'include', 'cli'):
        for d, _, fs in os.walk(os.path.join(root, top)):
            for f in fs:
                if f.endswith(('.c', '.h')):
                    files.append(os.path.relpath(os.path.join(d, f), root))
    bad, edges = [], {}
    for rel in sorted(files):
        me = layer_of(rel, ranks, wild)
        if me is None:
            bad.append('%s: not in any layer of src/LAYERS' % rel)
            continue
        with open(os.path.join(root, rel), errors='replace') as f:
            text = f.read()
        for m in INC.finditer(text):
            tgt = resolve(root, rel, m.group(1))
            if tgt is None:
                continue          # a system header or a generated one
            edges.setdefault(rel, []).append(tgt)
            them = layer_of(tgt, ranks, wild)
            if them is None or me[0] == 'umbrella':
                continue
            if them[0] == 'umbrella' and me[0] != 'cli':
                bad.append('%s (%s) includes the umbrella header %s: include what you use' % (rel, me[0], tgt))
            elif them[1] > me[1]:
                bad.append('%s (%s) includes %s (%s), a higher layer' % (rel, me[0], tgt, them[0]))
            elif them[1] == me[1] and them[0] != me[0]:
                bad.append('%s (%s) includes %s (%s), a sibling layer' % (rel, me[0], tgt, them[0]))
    # cycles among includes (depth-first search over the include graph)
    state = {}
    def dfs(u, stack):
        state[u] = 1
        stack.append(u)
        for v in edges.get(u, ()):
            if state.get(v) == 1:
                bad.append('include cycle: ' + ' -> '.join(stack[stack.index(v):] + [v]))
            elif v not in state:
                dfs(v, stack)
        stack.pop()
        state[u] = 2
    for u in sorted(edges):
        if u not in state:
            dfs(u, [])
    return bad


def self_test(root):
    ok = True
    cases = [
        ('an upward include', 'src/base/alloc.c', '#include "longpole/report/report.h"\n', 'a higher layer'),
        ('a sibling include', 'src/analysis/mystery/skew.c', '#include "longpole/analysis/spans/spancp.h"\n', 'a sibling layer'),
        ('an include cycle', 'include/longpole/base/alloc.h', '#include "longpole/base/diag.h"\n', None),
    ]
    for what, path, line, expect in cases:
        tmp = tempfile.mkdtemp(prefix='lplayers.')
        try:
            for top in ('src', 'include', 'cli'):
                shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
            p = os.path.join(tmp, path)
            with open(p) as f:
                text = f.read()
            if expect is None:   # make diag.h include alloc.h and alloc.h include diag.h
                d = os.path.join(tmp, 'include/longpole/base/diag.h')
                with open(d) as f:
                    dt = f.read()
                with open(d, 'w') as f:
                    f.write('#include "longpole/base/alloc.h"\n' + dt)
                expect = 'include cycle'
            with open(p, 'w') as f:
                f.write(line + text)
            found = [b for b in check(tmp) if expect in b]
            print('self-test: %s is %s' % (what, 'caught: ' + found[0] if found else 'NOT caught'))
            ok = ok and bool(found)
        finally:
            shutil.rmtree(tmp)
    return ok


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--self-test':
        sys.exit(0 if self_test(sys.argv[2]) else 1)
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    print('layers: %d violation(s)' % len(problems))
    sys.exit(1 if problems else 0)
