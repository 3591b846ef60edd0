#!/usr/bin/env python3
"""make_labels.py: build share/crystalperf/labels.tsv, the labelled functions the CrystalPerf
classifier is trained on (docs/analyses/crystalperf.md "The training set").

Sources, all Debian-packaged and read where Debian installs them:
  - man pages, sections 2 and 3 (manpages-dev): every function named on a page's NAME line,
    its documentation = the NAME line's description and the first sentences of DESCRIPTION;
    labelled by the header the SYNOPSIS includes (HEADERS below); group = that header;
  - the Python standard library (python3.11): every function and method, documentation =
    its docstring; labelled by module (PY_MODULES); group = the top-level module;
  - OpenJDK 17 sources (openjdk-17-source, lib/src.zip): every method with a javadoc
    comment; labelled by package or class (JAVA); group = the package.
  - measured rows (--measured FILE, rows written by `longpole classify --measure`): the
    label is where the frame's time went under perf.

The label-defining rule (header, module, package, class) is never a feature: its
sub-tokens are removed from the function, file and documentation text of the row, and
the group column (never featured) keeps the library for grouped cross-validation.
Output columns: label, group, function, library, file, doc, source (tab-separated).
Deterministic: rows sorted, no randomness.
"""
import ast, gzip, os, re, sys, zipfile

HEADERS = {
    'net': ['sys/socket.h', 'netdb.h', 'arpa/inet.h', 'netinet/in.h', 'net/if.h', 'ifaddrs.h', 'resolv.h',
            'netinet/ether.h', 'rpc/rpc.h', 'netinet/tcp.h', 'sys/un.h'],
    'disk': ['fcntl.h', 'sys/stat.h', 'dirent.h', 'sys/statfs.h', 'sys/statvfs.h', 'sys/xattr.h', 'ftw.h',
             'fts.h', 'aio.h', 'sys/file.h', 'mntent.h', 'sys/sendfile.h', 'sys/mount.h', 'sys/swap.h',
             'utime.h', 'glob.h', 'fstab.h', 'sys/vfs.h'],
    'cpu': ['string.h', 'strings.h', 'math.h', 'complex.h', 'ctype.h', 'wchar.h', 'wctype.h', 'regex.h',
            'search.h', 'crypt.h', 'iconv.h', 'fenv.h', 'inttypes.h', 'stdlib.h', 'fnmatch.h', 'malloc.h',
            'argz.h', 'envz.h', 'monetary.h', 'langinfo.h', 'byteswap.h', 'endian.h', 'obstack.h'],
    'wait': ['pthread.h', 'semaphore.h', 'sys/wait.h', 'poll.h', 'sys/select.h', 'sys/epoll.h', 'linux/futex.h',
             'mqueue.h', 'sys/sem.h', 'sys/msg.h'],
}
PY_MODULES = {
    'net': ['socket', 'ssl', 'socketserver', 'http', 'urllib', 'ftplib', 'smtplib', 'poplib', 'imaplib',
            'nntplib', 'telnetlib', 'xmlrpc', 'wsgiref', 'asyncio.streams', 'asyncio.selector_events',
            'asyncio.proactor_events', 'asyncio.sslproto', 'smtpd', 'asynchat', 'asyncore'],
    'disk': ['shutil', 'pathlib', 'tempfile', 'glob', 'filecmp', 'fileinput', '_pyio', 'dbm', 'shelve',
             'sqlite3', 'mailbox', 'zipimport', 'compileall', 'py_compile', 'tarfile', 'aifc', 'wave', 'sunau',
             'chunk', 'mimetypes', 'netrc', 'linecache'],
    'cpu': ['hashlib', 'hmac', 'json', 're', 'sre_compile', 'sre_parse', 'base64', 'binascii', 'struct',
            'statistics', 'decimal', '_pydecimal', 'fractions', 'heapq', 'bisect', 'difflib', 'textwrap',
            'string', 'html', 'xml', 'csv', 'pickle', 'pickletools', 'copy', 'pprint', 'random', 'colorsys',
            'graphlib', 'ast', 'tokenize', 'codecs', 'encodings', 'stringprep', 'quopri', 'uu', 'calendar',
            '_strptime', 'fnmatch', 'email', 'zoneinfo', 'datetime', 'numbers', 'shlex', 'gettext',
            'ipaddress', 'unicodedata', 'secrets', 'operator', 'collections', 'functools', 'dis', 'inspect',
            'configparser', 'tomllib', 'plistlib'],
    'wait': ['threading', 'queue', 'multiprocessing.synchronize', 'multiprocessing.connection',
             'multiprocessing.queues', 'multiprocessing.pool', 'concurrent', 'asyncio.locks', 'asyncio.queues',
             'selectors', 'sched', 'subprocess', 'asyncio.tasks', 'asyncio.futures'],
}
JAVA = {  # package (or package.Class) prefix -> label; longest prefix wins
    'java.net': 'net', 'javax.net': 'net', 'sun.net': 'net', 'java.net.http': 'net', 'jdk.internal.net': 'net',
    'sun.nio.ch.SocketChannelImpl': 'net', 'sun.nio.ch.NioSocketImpl': 'net', 'java.nio.channels.SocketChannel': 'net',
    'java.nio.file': 'disk', 'sun.nio.fs': 'disk', 'java.io.File': 'disk', 'java.io.RandomAccessFile': 'disk',
    'java.io.FileInputStream': 'disk', 'java.io.FileOutputStream': 'disk', 'java.nio.channels.FileChannel': 'disk',
    'sun.nio.ch.FileChannelImpl': 'disk', 'java.util.prefs': 'disk', 'java.util.jar': 'disk',
    'java.util.zip': 'cpu', 'java.security': 'cpu', 'javax.crypto': 'cpu', 'sun.security.provider': 'cpu',
    'com.sun.crypto.provider': 'cpu', 'java.util.regex': 'cpu', 'java.math': 'cpu', 'java.text': 'cpu',
    'java.util.Arrays': 'cpu', 'java.util.HashMap': 'cpu', 'java.util.TreeMap': 'cpu', 'java.lang.String': 'cpu',
    'java.lang.Math': 'cpu', 'java.util.Base64': 'cpu', 'java.util.Formatter': 'cpu',
    'java.util.concurrent.locks': 'wait', 'java.util.concurrent.CountDownLatch': 'wait',
    'java.util.concurrent.CyclicBarrier': 'wait', 'java.util.concurrent.Semaphore': 'wait',
    'java.util.concurrent.Phaser': 'wait', 'java.util.concurrent.Exchanger': 'wait',
    'java.util.concurrent.LinkedBlockingQueue': 'wait', 'java.util.concurrent.ArrayBlockingQueue': 'wait',
    'java.util.concurrent.SynchronousQueue': 'wait', 'java.util.concurrent.FutureTask': 'wait',
    'java.util.concurrent.CompletableFuture': 'wait',
 
}

def subtokens(s):
    out = []
    for run in re.findall(r'[A-Za-z]+', s or ''):
        out += [t.lower() for t in re.findall(r'[A-Z]+(?![a-z])|[A-Z]?[a-z]+', run) if 2 <= len(t) <= 40]
    return out

def scrub(text, banned, ident=True):
    """Drop the label-defining sub-tokens from an identifier (re-joined with '_') or a text."""
    if ident:
        return '_'.join(t for t in subtokens(text) if t not in banned)
    return ' '.join(w for w in re.findall(r'[A-Za-z][A-Za-z0-9]*', text or '')
                    if w.lower() not in banned and not set(subtokens(w)) & banned)[:400]

def clean_doc(s):
    return re.sub(r'\s+', ' ', (s or '').replace('\t', ' ')).strip()[:400]

rows = set()
def add(label, group, function, library, file, doc, source, banned):
    f = scrub(function, banned)
    if not f:
        return
    rows.add((label, group, f, scrub(library, banned) if library else '', scrub(file, banned) if file else '',
              scrub(clean_doc(doc), banned, ident=False), source))

def troff_text(s):
    s = s.replace('\\-', '-')
    s = re.sub(r'\\f[BIRP]|\\\(..|\\[&e]|\\\*.|\\s[-+]?\d', ' ', s)
    s = re.sub(r'^\.(B|I|BR|BI|IR|RB|IB|RI)\s+', '', s, flags=re.M)
    s = re.sub(r'^\.\S+.*$', '', s, flags=re.M)
    return re.sub(r'["\s]+', ' ', s).strip()

def man_pages(root='/usr/share/man'):
    hdr_label = {h: l for l, hs in HEADERS.items() for h in hs}
    for sec in ('man2', 'man3'):
        d = os.path.join(root, sec)
        if not os.path.isdir(d):
            continue
        for fn in sorted(os.listdir(d)):
            try:
                with gzip.open(os.path.join(d, fn), 'rt', errors='replace') as f:
                    t = f.read()
            except OSError:
                continue
            if t.startswith('.so '):
                continue
            m = re.search(r'^\.SH NAME\s*\n(.*?)\n\.SH', t, re.S | re.M)
            syn = re.search(r'^\.SH SYNOPSIS\s*\n(.*?)\n\.SH', t, re.S | re.M)
            if not m or not syn:
                continue
            incs = re.findall(r'#include\s*<([^>]+)>', syn.group(1))
            labels = {hdr_label[h] for h in incs if h in hdr_label}
            if len(labels) != 1:
                continue
            label = labels.pop()
            hdr = next(h for h in incs if h in hdr_label)
            name = troff_text(m.group(1))
            if ' - ' not in name:
                continue
            funcs, desc = name.split(' - ', 1)
            dm = re.search(r'^\.SH DESCRIPTION\s*\n(.*?)(\n\.SH|\Z)', t, re.S | re.M)
            body = troff_text(dm.group(1))[:300] if dm else ''
            banned = set(subtokens(hdr)) | {'h'}
            for fnm in re.split(r'[,\s]+', funcs):
                if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', fnm):
                    add(label, 'man:' + hdr, fnm, '', '', desc + '. ' + body, 'rule:man-header', banned)

def py_label(mod):
    best = None
    for label, mods in PY_MODULES.items():
        for m in mods:
            if mod == m or mod.startswith(m + '.'):
                if best is None or len(m) > len(best[1]):
                    best = (label, m)
    return best

def python_stdlib(root='/usr/lib/python3.11'):
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel.split(os.sep)[0] in ('test', 'idlelib', 'tkinter', 'lib2to3', 'ensurepip', 'turtledemo',
                                    'site-packages', 'dist-packages', 'distutils', '__pycache__', 'config-3.11-x86_64-linux-gnu'):
            dirs[:] = []
            continue
        dirs.sort()
        for fn in sorted(files):
            if not fn.endswith('.py'):
                continue
            mod = os.path.join(rel, fn[:-3]).replace(os.sep, '.').lstrip('.').removesuffix('.__init__')
            mod = mod[2:] if mod.startswith('..') else mod
            lab = py_label(mod)
            if not lab:
                continue
            label, key = lab
            try:
                tree = ast.parse(open(os.path.join(dirpath, fn), encoding='utf-8', errors='replace').read())
            except (SyntaxError, ValueError):
                continue
            banned = set(subtokens(key)) | set(subtokens(mod))
            group = 'py:' + mod.split('.')[0]
            def visit(node, prefix):
                for ch in ast.iter_child_nodes(node):
                    if isinstance(ch, ast.ClassDef):
                        visit(ch, prefix + ch.name + '.')
                    elif isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        if ch.name.startswith('__') and ch.name != '__init__':
                            continue
                        add(label, group, prefix + ch.name, '', '', ast.get_docstring(ch) or '', 'rule:py-module', banned)
            visit(tree, '')

def java_label(cls):
    best = None
    for k, v in JAVA.items():
        if cls == k or cls.startswith(k + '.') or cls.startswith(k + '$'):
            if best is None or len(k) > len(best[0]):
                best = (k, v)
    return best

def openjdk(src='/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip'):
    if not os.path.exists(src):
        return
    meth = re.compile(r'/\*\*(.*?)\*/\s*(?:@\w+(?:\([^)]*\))?\s*)*((?:public|protected|private|static|final|'
                      r'synchronized|native|abstract|default|\s)+)[\w<>\[\],.? ]+?\s+(\w+)\s*\(', re.S)
    with zipfile.ZipFile(src) as z:
        for name in sorted(z.namelist()):
            if not name.endswith('.java') or '/' not in name:
                continue
            path = name.split('/', 1)[1] if name.startswith(('java.', 'jdk.')) else name
            cls = path[:-5].replace('/', '.')
            lab = java_label(cls)
            if not lab:
                continue
            key, label = lab
            text = z.read(name).decode('utf-8', 'replace')
            banned = set(subtokens(key))
            short = cls.rsplit('.', 1)[1]
            pkg = cls.rsplit('.', 1)[0]
            for m in meth.finditer(text):
                doc = re.sub(r'<[^>]+>|\{@\w+\s*([^}]*)\}|@\w+|\s*\*\s*', ' ', m.group(1))
                first = re.split(r'(?<=\.)\s', doc.strip(), 1)[0]
                add(label, 'java:' + pkg, short + '.' + m.group(3), '', '', first, 'rule:java-package', banned)

def measured(path):
    for line in open(path):
        f = line.rstrip('\n').split('\t')
        if len(f) == 7 and f[0] in ('cpu', 'disk', 'net', 'wait') and not line.startswith('label\t'):
            rows.add(tuple(f))

def main():
    out = 'share/crystalperf/labels.tsv'
    args = sys.argv[1:]
    meas = []
    while args:
        a = args.pop(0)
        if a == '--measured':
            meas.append(args.pop(0))
        elif a == '-o':
            out = args.pop(0)
    man_pages()
    python_stdlib()
    openjdk()
    for m in meas:
        measured(m)
    with open(out, 'w') as f:
        f.write('label\tgroup\tfunction\tlibrary\tfile\tdoc\tsource\n')
        for r in sorted(rows):
            f.write('\t'.join(r) + '\n')
    from collections import Counter
    c = Counter(r[0] for r in rows)
    print(f'{out}: {len(rows)} functions, {len({r[1] for r in rows})} groups, ' +
          ', '.join(f'{k} {v}' for k, v in sorted(c.items())))

if __name__ == '__main__':
    main()
