// jaegerui_cp.js: the benchmark peer of `longpole spans`: Jaeger UI's own critical
// path of a trace, run in node on a Jaeger JSON file, parse included.
//
// usage: node jaegerui_cp.js FILE.json   (prints "traces N spans M sections K" on stdout)
//
// A port, for the benchmark only, of jaegertracing/jaeger-ui at commit
// c321fb32bbca0bdce9e8c2d40afb35abbf54c12b (2026-08-18), directory
// packages/jaeger-ui/src/components/TracePage/CriticalPath/:
//   index.ts                               computeCriticalPath, criticalPathForTrace
//   utils/cpspan.ts                        createCPSpan, createCPSpanMap (isBlockingSpan)
//   utils/findLastFinishingChildSpan.ts    findLastFinishingChildSpan
//   utils/sanitizeOverFlowingChildren.ts   sanitizeOverFlowingChildren
// The algorithm and its data structures (a Map of CPSpan objects per root, recursion,
// object spreads when clipping) are kept as they are there; TypeScript types and
// memoizeOne are left out. What the UI does before (transformTraceData and the OTel
// adapter: parent from the first CHILD_OF reference, else the first reference; children
// ordered by start time; span.kind from the tags; the roots) is reduced to the fields
// the critical path reads. The port is not shipped with longpole and does not run in
// its tests; bench/spans/run.sh runs it beside `longpole spans` on the same files.
'use strict';
const fs = require('fs');

const KIND = { unspecified: 0, internal: 1, server: 2, client: 3, producer: 4, consumer: 5 };

// ---- what the UI builds from the JSON (reduced) -------------------------------------------
function otelSpans(trace) {
  const procs = trace.processes || {};
  const byId = new Map();
  const spans = trace.spans.map(s => {
    let parentSpanID;
    const refs = s.references || [];
    const ref = refs.find(r => r.refType === 'CHILD_OF' && r.traceID === s.traceID) || refs[0];
    if (ref) parentSpanID = ref.spanID;
    let kind = 0;
    for (const t of s.tags || []) if (t.key === 'span.kind') kind = KIND[String(t.value).toLowerCase()] || 0;
    const o = {
      spanID: s.spanID,
      parentSpanID,
      kind,
      startTime: s.startTime,
      duration: s.duration,
      endTime: s.startTime + s.duration,
      service: (procs[s.processID] || {}).serviceName,
      childSpans: [],
      parentSpan: undefined,
    };
    byId.set(o.spanID, o);
    return o;
  });
  const rootSpans = [];
  for (const o of spans) {
    const p = o.parentSpanID !== undefined ? byId.get(o.parentSpanID) : undefined;
    if (p) {
      o.parentSpan = p;
      p.childSpans.push(o);
    } else {
      rootSpans.push(o);
    }
  }
  for (const o of spans) o.childSpans.sort((a, b) => a.startTime - b.startTime);
  rootSpans.sort((a, b) => a.startTime - b.startTime);
  return { spans, rootSpans };
}

// ---- utils/cpspan.ts -------------------------------------------------------------------------
const PRODUCER = 4, CONSUMER = 5;
function isBlockingSpan(childKind, parentKind) {
  return !(parentKind === PRODUCER && childKind === CONSUMER);
}
function createCPSpan(span) {
  return {
    spanID: span.spanID,
    parentSpanID: span.parentSpanID,
    isBlocking: isBlockingSpan(span.kind, span.parentSpan && span.parentSpan.kind),
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    childSpanIDs: [],
  };
}
function createCPSpanMap(rootSpan) {
  const spanMap = new Map();
  const traverse = span => {
    const cpSpan = createCPSpan(span);
    spanMap.set(span.spanID, cpSpan);
    span.childSpans.forEach(child => {
      if (isBlockingSpan(child.kind, span.kind)) {
        cpSpan.childSpanIDs.push(child.spanID);
        traverse(child);
      }
    });
  };
  traverse(rootSpan);
  return spanMap;
}

// ---- utils/findLastFinishingChildSpan.ts -----------------------------------------------------
function findLastFinishingChildSpan(spanMap, currentSpan, returningChildStartTime) {
  let last;
  let maxEndTime = -1;
  currentSpan.childSpanIDs.forEach(childId => {
    const childSpan = spanMap.get(childId);
    if (!childSpan) return;
    const childEndTime = childSpan.endTime;
    if (returningChildStartTime) {
      if (childEndTime < returningChildStartTime && childEndTime > maxEndTime) {
        maxEndTime = childEndTime;
        last = childSpan;
      }
    } else if (childEndTime > maxEndTime) {
      maxEndTime = childEndTime;
      last = childSpan;
    }
  });
  return last;
}

// ---- utils/sanitizeOverFlowingChildren.ts ----------------------------------------------------
function sanitizeOverFlowingChildren(spanMap) {
  const spanIds = [...spanMap.keys()];
  spanIds.forEach(spanId => {
    const span = spanMap.get(spanId);
    if (!span.parentSpanID) return;
    const parentSpan = spanMap.get(span.parentSpanID);
    if (!parentSpan) {
      spanMap.delete(span.spanID);
      return;
    }
    const childEndTime = span.endTime;
    const parentEndTime = parentSpan.endTime;
    if (span.startTime >= parentSpan.startTime) {
      if (span.startTime >= parentEndTime) {
        spanMap.delete(span.spanID);
        parentSpan.childSpanIDs = parentSpan.childSpanIDs.filter(id => id !== span.spanID);
        return;
      }
      if (childEndTime > parentEndTime) {
        spanMap.set(span.spanID, { ...span, duration: parentEndTime - span.startTime, endTime: parentEndTime });
      }
      return;
    }
    if (childEndTime <= parentSpan.startTime) {
      spanMap.delete(span.spanID);
      parentSpan.childSpanIDs = parentSpan.childSpanIDs.filter(id => id !== span.spanID);
    } else if (childEndTime <= parentEndTime) {
      spanMap.set(span.spanID, { ...span, startTime: parentSpan.startTime, duration: childEndTime - parentSpan.startTime });
    } else {
      spanMap.set(span.spanID, {
        ...span,
        startTime: parentSpan.startTime,
        duration: parentEndTime - parentSpan.startTime,
        endTime: parentEndTime,
      });
    }
  });
  return spanMap;
}

// ---- index.ts ----------------------------------------------------------------------------------
function computeCriticalPath(spanMap, spanId, criticalPath, returningChildStartTime) {
  const currentSpan = spanMap.get(spanId);
  if (!currentSpan) return criticalPath;
  const lfc = findLastFinishingChildSpan(spanMap, currentSpan, returningChildStartTime);
  let section;
  if (lfc) {
    section = { spanID: currentSpan.spanID, sectionStart: lfc.endTime, sectionEnd: returningChildStartTime || currentSpan.endTime };
    if (section.sectionStart !== section.sectionEnd) criticalPath.push(section);
    computeCriticalPath(spanMap, lfc.spanID, criticalPath);
  } else {
    section = { spanID: currentSpan.spanID, sectionStart: currentSpan.startTime, sectionEnd: returningChildStartTime || currentSpan.endTime };
    if (section.sectionStart !== section.sectionEnd) criticalPath.push(section);
    if (currentSpan.parentSpanID) computeCriticalPath(spanMap, currentSpan.parentSpanID, criticalPath, currentSpan.startTime);
  }
  return criticalPath;
}

function criticalPathForTrace(trace) {
  let sections = [];
  const errors = [];
  for (const rootSpan of trace.rootSpans) {
    try {
      const sanitized = sanitizeOverFlowingChildren(createCPSpanMap(rootSpan));
      sections = computeCriticalPath(sanitized, rootSpan.spanID, sections);
    } catch (error) {
      errors.push(`Root span ${rootSpan.spanID}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { sections, failed: errors.length > 0, errors };
}

// ---- driver --------------------------------------------------------------------------------------
// Files up to 256 MB are parsed whole (JSON.parse, as the UI does with a download). A
// bigger {"data":[trace,...]} (node's strings stop at 512 MB) is cut into its traces
// by a scanner of the bytes (depth, strings, escapes) and each trace is parsed alone.
let ntraces = 0, nspans = 0, nsec = 0, failed = 0;
function one(t) {
  const ot = otelSpans(t);
  ntraces++;
  nspans += ot.spans.length;
  const r = criticalPathForTrace(ot);
  nsec += r.sections.length;
  failed += r.failed ? 1 : 0;
}
const file = process.argv[2];
const size = fs.statSync(file).size;
if (size <= 256 << 20) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const traces = Array.isArray(doc) ? doc : doc.data || [doc];
  traces.forEach(one);
} else {
  const fd = fs.openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(64 << 20);
  let depth = 0, inStr = false, esc = false, parts = [], partStart = -1;
  for (;;) {
    const n = fs.readSync(fd, chunk, 0, chunk.length, null);
    if (n <= 0) break;
    partStart = depth >= 3 ? 0 : -1;
    for (let i = 0; i < n; i++) {
      const c = chunk[i];
      if (inStr) {
        if (esc) esc = false;
        else if (c === 0x5c) esc = true;
        else if (c === 0x22) inStr = false;
        continue;
      }
      if (c === 0x22) inStr = true;
      else if (c === 0x7b || c === 0x5b) {
        if (++depth === 3) partStart = i;
      } else if (c === 0x7d || c === 0x5d) {
        if (depth-- === 3) {
          parts.push(Buffer.from(chunk.subarray(partStart, i + 1)));
          one(JSON.parse(Buffer.concat(parts).toString('utf8')));
          parts = [];
          partStart = -1;
        }
      }
    }
    if (partStart >= 0) parts.push(Buffer.from(chunk.subarray(partStart, n)));
  }
  fs.closeSync(fd);
}
console.log(`traces ${ntraces} spans ${nspans} sections ${nsec} failed ${failed}`);
