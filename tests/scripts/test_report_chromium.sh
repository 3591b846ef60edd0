#!/usr/bin/env bash
# test_report_chromium.sh LONGPOLE SRCDIR: `longpole report` opened in headless Chromium
# (issue 6). For the demo trace (`longpole generate dataflow --demo`):
#  - no console message at all (Chromium logs every console message, uncaught error and
#    blocked resource to stderr with --enable-logging=stderr), and the page's own
#    self-check (window errors, unhandled rejections, CSP violations, console.error and
#    console.warn caught by the script and written into <div id="lp-selfcheck">) is clean;
#  - the timeline has one row (g.lp-row) per worker of `longpole info`;
#  - the critical-path elements drawn (rect.lp-cpa + line.lp-cpm) exist and are as many as
#    `longpole cp --json` lists;
#  - the page opens with the headline (issue 12), the same sentences as `cp --json`'s
#    headline.text, before any table;
#  - a screenshot is taken and decoded (PNG: zlib and the scanline filters, in Python's
#    standard library): it must not be blank (many distinct colours, enough ink).
# Then the same checks of errors for a request-log report, a span report (../shared/data
# when present, else a small generated Zipkin file) and a trace whose names are script
# and markup injections: nothing injected may run or appear as an element.
# Skips (77) when chromium or python3 is missing; scripts/deps.sh (test, ci) installs them.
set -euo pipefail
lp=$1
src=$2
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "SKIP: chromium is not installed (sh scripts/deps.sh test installs it)"; exit 77
fi
if ! command -v python3 > /dev/null; then
  echo "SKIP: python3 is not installed (needed to decode the screenshot)"; exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export LONGPOLE_NO_PROGRESS=1 HOME="$tmp/home"
mkdir -p "$HOME"
fail() { echo "FAIL: $*"; exit 1; }

# run_chrome OUT_PREFIX HTML [extra flags...]: --dump-dom into OUT.dom, stderr into OUT.err
run_chrome() {
  local out=$1 html=$2; shift 2
  local prof; prof=$(mktemp -d "$tmp/profile.XXXXXX")
  timeout 180 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --user-data-dir="$prof" --window-size=1280,1600 "$@" "file://$html" > "$out.dom" 2> "$out.err" ||
    fail "chromium failed on $html (exit $?): $(tail -3 "$out.err")"
  rm -rf "$prof"
}
# check_clean NAME OUT: no console message, the self-check present and clean
check_clean() {
  local name=$1 out=$2
  if grep -q 'CONSOLE' "$out.err"; then
    grep 'CONSOLE' "$out.err" | head -5
    fail "$name: the page wrote to the console"
  fi
  grep -q '<div id="lp-selfcheck"' "$out.dom" || fail "$name: no self-check in the page (the script did not run)"
  local sc; sc=$(grep -o '<div id="lp-selfcheck"[^>]*>[^<]*' "$out.dom")
  echo "$sc" | grep -c 'data-ok="1"' >/dev/null || fail "$name: the page recorded errors: $sc"
  echo "$sc" | grep -c 'data-errors="0"' >/dev/null || fail "$name: the page recorded errors: $sc"
}

# ---- the demo trace -------------------------------------------------------------------
"$lp" generate dataflow --demo -o "$tmp/demo.lpt"
"$lp" report "$tmp/demo.lpt" -o "$tmp/demo.html" -q
workers=$("$lp" info "$tmp/demo.lpt" | awk '$1 == "workers" {print $2}')
elements=$("$lp" cp --json "$tmp/demo.lpt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["critical_path"]["elements"])')
[ "$workers" -gt 1 ] && [ "$elements" -gt 1 ] || fail "unexpected demo trace: $workers workers, $elements path elements"
run_chrome "$tmp/demo" "$tmp/demo.html" --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom
check_clean demo "$tmp/demo"
# (the patterns need the attribute values: the script's own source holds the bare tags)
rows=$(grep -o '<g class="lp-row" data-w="[0-9]' "$tmp/demo.dom" | wc -l)
[ "$rows" -eq "$workers" ] || fail "the timeline has $rows rows, the trace $workers workers"
cpa=$(grep -o '<rect class="lp-cpa" data-k="[0-9]' "$tmp/demo.dom" | wc -l)
cpm=$(grep -o '<line class="lp-cpm" data-k="[0-9]' "$tmp/demo.dom" | wc -l)
[ $((cpa + cpm)) -eq "$elements" ] ||
  fail "the timeline draws $cpa path activities + $cpm path messages, longpole cp --json lists $elements elements"
[ "$cpa" -gt 0 ] && [ "$cpm" -gt 0 ] || fail "expected both activities and messages on the drawn path ($cpa, $cpm)"
# the other sections are there too
for s in overview timeline breakdown summaries; do
  grep -q "<section class=\"lp-sec\" id=\"lp-s-$s\"" "$tmp/demo.dom" || fail "demo: section $s missing"
done
echo "demo: $rows rows, $cpa + $cpm = $elements critical-path elements drawn, no console message"
# the answer first (issue 12): the headline opens the report, before any table, and says
# what `cp --json` says (its text, sentence by sentence)
"$lp" cp --json "$tmp/demo.lpt" > "$tmp/demo.cp.json"
python3 - "$tmp/demo.dom" "$tmp/demo.cp.json" <<'PY' || fail "demo: the report's headline is missing, late or differs from cp --json"
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
want = json.load(open(sys.argv[2]))["headline"]["text"].split("\n")
m = re.search(r'<div class="lp-headline" id="headline">(.*?)</div>', dom, re.S)
if not m:
    sys.exit("no headline in the rendered page")
got = [html.unescape(p) for p in re.findall(r"<p>(.*?)</p>", m.group(1), re.S)]
if got != want:
    sys.exit("headline %r, cp --json says %r" % (got, want))
first_table = dom.find("<table", dom.find('id="lp-s-'))
if first_table != -1 and first_table < m.start():
    sys.exit("a table comes before the headline")
if not want[0].startswith("The critical path"):
    sys.exit("unexpected headline %r" % want[0])
print("headline:", want[0])
PY

# the screenshot, decoded
run_chrome "$tmp/shot" "$tmp/demo.html" --virtual-time-budget=10000 --screenshot="$tmp/shot.png"
[ -s "$tmp/shot.png" ] || fail "no screenshot written"
python3 - "$tmp/shot.png" <<'PY' || fail "the screenshot is blank or not a PNG"
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, hdr = 8, b'', None
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        hdr = struct.unpack('>IIBBBBB', body)
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = hdr
assert depth == 8 and ctype in (2, 6) and interlace == 0, 'unexpected PNG layout %r' % (hdr,)
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours, ink = set(), 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 2 == 0:
        for x in range(0, w, 2):
            px = bytes(line[x * bpp:x * bpp + 3])
            colours.add(px)
            ink += px != b'\xff\xff\xff'
    prev = line
sampled = ((h + 1) // 2) * ((w + 1) // 2)
print('screenshot: %dx%d, %d distinct colours, %.1f%% not white' % (w, h, len(colours), 100.0 * ink / sampled))
assert len(colours) >= 16 and ink >= sampled * 0.02
PY

# ---- request logs -------------------------------------------------------------------------
"$lp" generate requests --requests 500 -o "$tmp/req" > /dev/null
"$lp" report "$tmp/req.csv" -o "$tmp/req.html" -q
run_chrome "$tmp/req" "$tmp/req.html" --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom
check_clean requests "$tmp/req"
grep -q 'id="lp-s-requests"' "$tmp/req.dom" || fail "request-log report without its section"

# ---- spans -----------------------------------------------------------------------------
data="$src/../shared/data"
if [ -d "$data/zipkin" ] && [ -d "$data/jaeger" ]; then
  spans=("$data/zipkin" "$data/jaeger")
else
  echo "note: $data absent; spans checked on a generated file"
  printf '[{"traceId":"a","id":"1","name":"get","timestamp":10,"duration":50,"localEndpoint":{"serviceName":"web"}},{"traceId":"a","parentId":"1","id":"2","name":"q","timestamp":20,"duration":20,"localEndpoint":{"serviceName":"db"}}]\n' > "$tmp/z.json"
  spans=("$tmp/z.json")
fi
"$lp" report "${spans[@]}" -o "$tmp/spans.html" -q || [ $? -eq 4 ]
run_chrome "$tmp/spans" "$tmp/spans.html" --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom
check_clean spans "$tmp/spans"
grep -q 'id="lp-s-spans"' "$tmp/spans.dom" || fail "span report without its section"

# ---- hostile names: nothing injected runs or becomes an element ---------------------------
cat > "$tmp/evil.lpt" <<'EOF'
longpole-trace 1
# names (lpt escapes: %20 space, %3D '='): a worker "</script><script>document.title='PWNED'</script>",
# types "<img src=x onerror="...">" and "<svg onload="...">", an operator "<b id=pwned>op</b>"
A </script><script>document.title%3D'PWNED'</script> 0 10 <img%20src%3Dx%20onerror%3D"document.title%3D'PWNED'"> <b%20id%3Dpwned>op</b>
A w2 0 5 processing
M w2 5 </script><script>document.title%3D'PWNED'</script> 8
A w2 5 12 <svg%20onload%3D"document.title%3D'PWNED'">
EOF
"$lp" report "$tmp/evil.lpt" --title "<script>document.title='PWNED'</script>" -o "$tmp/evil.html" -q
run_chrome "$tmp/evil" "$tmp/evil.html" --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom
check_clean evil "$tmp/evil"
grep -q 'PWNED</title>' "$tmp/evil.dom" && ! grep -q '<title>&lt;script' "$tmp/evil.dom" && fail "an injected script ran"
grep -q '<title>&lt;script&gt;' "$tmp/evil.dom" || fail "the title is not the escaped text"
grep -qi '<img\|id="pwned"\|<svg onload' "$tmp/evil.dom" && fail "an injected element is in the page"
rows=$(grep -o '<g class="lp-row" data-w="[0-9]' "$tmp/evil.dom" | wc -l)
[ "$rows" -eq 2 ] || fail "evil: expected 2 timeline rows, got $rows"
echo "requests, spans and hostile names: no console message, nothing injected"
echo "ok"
