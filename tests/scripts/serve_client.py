#!/usr/bin/env python3
"""serve_client.py: raw HTTP checks of `longpole serve` for tests/scripts/test_serve.sh.

Usage: serve_client.py PORT attacks|concurrent N PATH|ratelimit N
Raw sockets, because HTTP clients normalise what the attacks need to send as is
(dot segments, percent-encoded dots, NUL bytes, absolute-form targets). Prints one line
per failed expectation and exits 1 if any; every socket has a timeout, so a hung
server fails the test instead of blocking it.
"""
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def request(port, raw, timeout=20.0, read_body=True):
    """Send raw bytes, return (status, headers dict, body bytes); status 0 if the
    server closed the connection without an answer."""
    s = socket.create_connection((HOST, port), timeout=timeout)
    try:
        s.sendall(raw)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
            head, sep, rest = data.partition(b"\r\n\r\n")
            if sep:
                lines = head.split(b"\r\n")
                hdr = {}
                for l in lines[1:]:
                    k, _, v = l.partition(b":")
                    hdr[k.strip().lower().decode()] = v.strip().decode("latin-1")
                n = int(hdr.get("content-length", "-1"))
                if not read_body or (n >= 0 and len(rest) >= n):
                    break
        head, sep, body = data.partition(b"\r\n\r\n")
        if not head:
            return 0, {}, b""
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        hdr = {}
        for l in lines[1:]:
            k, _, v = l.partition(b":")
            hdr[k.strip().lower().decode()] = v.strip().decode("latin-1")
        return status, hdr, body
    finally:
        s.close()


def get(path, host="127.0.0.1", extra=b""):
    return b"GET " + path + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n" + extra + b"\r\n"


def attacks(port):
    bad = []
    cases = [
        # (description, raw request, acceptable statuses)
        ("dot segments", get(b"/../../etc/passwd"), {400}),
        ("dot segments after a route", get(b"/view/../../etc/passwd"), {400}),
        ("encoded dots", get(b"/%2e%2e/%2e%2e/etc/passwd"), {400}),
        ("encoded slash", get(b"/view/..%2f..%2fetc%2fpasswd"), {400}),
        ("double-encoded", get(b"/%252e%252e/etc/passwd"), {400}),
        ("empty segment", get(b"//etc/passwd"), {400}),
        ("absolute path that is no route", get(b"/etc/passwd"), {404}),
        ("absolute-form target", get(b"http://127.0.0.1/etc/passwd"), {400}),
        ("backslashes", get(b"/..\\..\\etc\\passwd"), {400}),
        ("NUL in the query", get(b"/api/cp?from=%00"), {400}),
        ("NUL byte in the path", get(b"/api\x00/../etc/passwd"), {400}),
        ("control byte in the path", get(b"/api\x01cp"), {400}),
        ("a file name as a parameter", get(b"/api/cp?file=/etc/passwd"), {400}),
        ("a path as a parameter value", get(b"/api/cp?from=/etc/passwd"), {400}),
        ("an option as a parameter value", get(b"/api/summary?by=--format%3Dlpt"), {400}),
        ("long URL", get(b"/" + b"a" * 20000), {400, 414, 431}),
        ("long header", get(b"/api", extra=b"X-Big: " + b"b" * 70000 + b"\r\n"), {400, 413, 431}),
        ("many headers", get(b"/api", extra=b"".join(b"X-H%d: v\r\n" % i for i in range(3000))), {400, 413, 431}),
        ("headers just over the 16 KiB bound", get(b"/api", extra=b"X-Big: " + b"b" * 17000 + b"\r\n"), {431}),
        ("no Host header", b"GET /api HTTP/1.0\r\n\r\n", {400}),
        ("body on GET", b"GET /api/cp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n0123456789", {413}),
        ("chunked body", b"GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", {413}),
        ("POST", b"POST /api/cp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", {405}),
        ("PUT", b"PUT /api HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc", {405}),
        ("DELETE", b"DELETE /api HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", {405}),
        ("TRACE", b"TRACE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", {405}),
        ("OPTIONS *", b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", {400, 405}),
        ("DNS rebinding Host", get(b"/api", host="evil.example"), {403}),
        ("Host with a loopback-looking suffix", get(b"/api", host="127.0.0.1.evil.example"), {403}),
        ("garbage request line", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", {0, 400, 505}),
    ]
    for desc, raw, ok in cases:
        try:
            st, hdr, body = request(port, raw)
        except OSError as e:
            bad.append(f"{desc}: {e}")
            continue
        if st not in ok:
            bad.append(f"{desc}: status {st}, expected {sorted(ok)}")
        if b"root:" in body:
            bad.append(f"{desc}: the answer holds /etc/passwd")
        if st and st != 400 and st not in (413, 414, 431, 505) and hdr.get("x-content-type-options") != "nosniff":
            bad.append(f"{desc}: no nosniff header")
        if st == 405 and "GET" not in hdr.get("allow", ""):
            bad.append(f"{desc}: 405 without Allow")
    # a good request still works, with the security headers
    st, hdr, body = request(port, get(b"/api"))
    if st != 200:
        bad.append(f"/api after the attacks: status {st}")
    for k, v in (("cache-control", "no-store"), ("x-content-type-options", "nosniff"), ("x-frame-options", "DENY")):
        if hdr.get(k) != v:
            bad.append(f"/api: header {k} is {hdr.get(k)!r}, expected {v!r}")
    if "default-src 'none'" not in hdr.get("content-security-policy", ""):
        bad.append("/api: no restrictive Content-Security-Policy")
    if "access-control-allow-origin" in hdr:
        bad.append("/api: CORS header present")
    # HEAD: same headers, no body
    st, hdr, body = request(port, b"HEAD /api HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", read_body=False)
    if st != 200 or body:
        bad.append(f"HEAD /api: status {st}, {len(body)} body bytes")
    return bad


def concurrent(port, n, path):
    """n connections opened at once (a barrier), each sends its request, reads the
    answer; plus n // 5 idle connections held open meanwhile."""
    bad = []
    statuses = []
    lock = threading.Lock()
    barrier = threading.Barrier(n)

    def one(i):
        s = None
        try:
            s = socket.create_connection((HOST, port), timeout=60)
        except OSError as e:
            with lock:
                statuses.append(f"connect: {e}")
        try:
            barrier.wait(timeout=60)
        except threading.BrokenBarrierError:
            pass
        if s is None:
            return
        try:
            s.sendall(get(path.encode()))
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            line = data.split(b"\r\n", 1)[0].split(b" ")
            st = int(line[1]) if len(line) > 1 and line[1].isdigit() else 0
            with lock:
                statuses.append(st)
        except OSError as e:
            with lock:
                statuses.append(f"error: {e}")
        finally:
            s.close()

    idle = []
    for _ in range(n // 5):
        try:
            idle.append(socket.create_connection((HOST, port), timeout=60))
        except OSError:
            pass
    t0 = time.time()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for s in idle:
        s.close()
    counts = {}
    for st in statuses:
        counts[st] = counts.get(st, 0) + 1
    print(f"{n} concurrent GET {path} (+{len(idle)} idle connections): {counts} in {time.time() - t0:.2f} s")
    if len(statuses) != n:
        bad.append(f"only {len(statuses)} of {n} requests finished")
    if counts.get(200, 0) != n:
        bad.append(f"not every request succeeded: {counts}")
    return bad


def ratelimit(port, n):
    bad = []
    seen = {}
    retry = None
    for _ in range(n):
        st, hdr, _ = request(port, get(b"/api"))
        seen[st] = seen.get(st, 0) + 1
        if st == 429:
            retry = hdr.get("retry-after")
    print(f"{n} quick requests: {seen}")
    if not seen.get(429):
        bad.append("no request was rate-limited")
    if not seen.get(200):
        bad.append("no request was answered")
    if seen.get(429) and not (retry or "").isdigit():
        bad.append("429 without Retry-After")
    return bad


def main():
    port = int(sys.argv[1])
    what = sys.argv[2]
    if what == "attacks":
        bad = attacks(port)
    elif what == "concurrent":
        bad = concurrent(port, int(sys.argv[3]), sys.argv[4])
    elif what == "ratelimit":
        bad = ratelimit(port, int(sys.argv[3]))
    else:
        print("unknown check", what)
        return 2
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
