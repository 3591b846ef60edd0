/* reqlog.c: loading request logs (see reqlog.h, docs/formats/request-log.md), after
 * UberTrace's minimal schema (Mystery Machine, OSDI'14 §3) and segments (§4.1).
 *
 * Pipeline: (1) every input becomes shards (32 MiB ranges of plain files, whole
 * compressed streams), parsed concurrently into shard-local tables; (2) shards are
 * merged in order: local ids become global ids, records are copied into one array
 * (each shard freed as soon as it is copied), parse diagnostics are reported with
 * their global line; (3) records are grouped by request: nothing to do when each
 * request's lines are contiguous (a mixed log sorted by request: the common case and
 * the fast one), else a stable counting sort applied in place by cycles; (4) per
 * request, concurrently: events sorted by task and order, the two rules checked
 * (unique <event, task>; no time going backwards within a task on one host), segment
 * keys interned in thread-local tables; (5) problems reported in input order, segment
 * ids made canonical (sorted by names) and written into the records.
 */
#include "import/reqlog/reqlog_int.h"
#include "base/hashmap.h"
#include "base/pool.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- options ---------------------------------------------------------------------- */

void lp_reqlog_opts_init(lp_reqlog_opts *o)
{
    memset(o, 0, sizeof *o);
    o->header = -1;
}

lp_status lp_reqlog_opts_columns(lp_reqlog_opts *o, const char *spec, lp_error *err)
{
    /* the names are kept in the options' own buffer */
    size_t n = strlen(spec);
    if (n + 1 > sizeof o->strbuf - o->strused)
        return lp_error_set(err, LP_ERR_LIMIT, "--columns: specification too long");
    char *s = o->strbuf + o->strused;
    memcpy(s, spec, n + 1);
    o->strused += n + 1;
    char *save = NULL;
    for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1])
            return lp_error_set(err, LP_ERR_ARG, "--columns: '%s' is not ROLE=COLUMN", tok);
        *eq = '\0';
        const char *val = eq + 1;
        if (strncmp(tok, "attr.", 5) == 0 && tok[5]) {
            if (o->nattr == LP_REQLOG_MAXATTR)
                return lp_error_set(err, LP_ERR_LIMIT, "--columns: at most %d attributes", LP_REQLOG_MAXATTR);
            o->attr_name[o->nattr] = tok + 5;
            o->attr_col[o->nattr] = val;
            o->nattr++;
            continue;
        }
        int r;
        for (r = 0; r < LP_RL_NROLES; r++)
            if (strcmp(tok, rl_role_names[r]) == 0)
                break;
        if (r == LP_RL_NROLES)
            return lp_error_set(err, LP_ERR_ARG,
                                "--columns: unknown role '%s' (request, host, time, event, task, seq, attr.NAME)",
                                tok);
        o->col[r] = val;
    }
    return LP_OK;
}

lp_status lp_reqlog_opts_unit(lp_reqlog_opts *o, const char *u, lp_error *err)
{
    static const struct {
        const char *n;
        lp_reqlog_unit u;
    } units[] = {{"auto", LP_RL_UNIT_AUTO}, {"ns", LP_RL_UNIT_NS}, {"us", LP_RL_UNIT_US}, {"ms", LP_RL_UNIT_MS},
                 {"s", LP_RL_UNIT_S},       {"iso", LP_RL_UNIT_ISO}, {"rfc3339", LP_RL_UNIT_ISO}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].n) == 0) {
            o->unit = units[i].u;
            return LP_OK;
        }
    return lp_error_set(err, LP_ERR_ARG, "unknown time unit '%s' (ns, us, ms, s, iso)", u);
}

/* ---- small helpers ------------------------------------------------------------------ */

#define GROW(arr, cap, need)                                                                       \
    do {                                                                                           \
        if ((need) > (cap)) {                                                                      \
            void *p_ = (arr);                                                                      \
            size_t c_ = (cap);                                                                     \
            if (lp_grow(&p_, &c_, (need), sizeof *(arr)))                                          \
                goto nomem;                                                                        \
            (arr) = p_;                                                                            \
            (cap) = c_;                                                                            \
        }                                                                                          \
    } while (0)

/* A map from name ids to dense ids (hosts, tasks, events, requests), grown on demand. */
typedef struct idmap {
    uint32_t *v;
    size_t n;
} idmap;

static int idmap_get(idmap *m, lp_str sid, uint32_t *out)
{
    if (sid >= m->n) {
        size_t nn = m->n ? m->n : 1024;
        while (nn <= sid)
            nn *= 2;
        uint32_t *v = lp_reallocarray(m->v, nn, sizeof *v);
        if (!v)
            return -1;
        memset(v + m->n, 0xff, (nn - m->n) * sizeof *v);
        m->v = v;
        m->n = nn;
    }
    *out = m->v[sid];
    return 0;
}

/* Dense id of a global name in one of the id spaces (host, task, event). */
typedef struct space {
    idmap map;
    lp_str *names;
    size_t cap;
    uint32_t n;
} space;

static int space_id(space *sp, lp_str sid, uint32_t *out)
{
    uint32_t v;
    if (idmap_get(&sp->map, sid, &v))
        return -1;
    if (v != UINT32_MAX) {
        *out = v;
        return 0;
    }
    if (sp->n == UINT32_MAX - 1)
        return -1;
    if (sp->n == sp->cap) {
        void *p = sp->names;
        size_t c = sp->cap;
        if (lp_grow(&p, &c, sp->n + 1, sizeof *sp->names))
            return -1;
        sp->names = p;
        sp->cap = c;
    }
    sp->names[sp->n] = sid;
    sp->map.v[sid] = sp->n;
    *out = sp->n++;
    return 0;
}

/* Maps of 64-bit keys to dense values (points, segments): the library's hash table. */

/* Find or insert `k`; a new key gets value `nv`. Returns the key's value, or
 * UINT32_MAX on out of memory; *isnew tells whether it was inserted. */
static inline uint32_t kmap_put(lp_hmap *m, uint64_t k, uint32_t nv, int *isnew)
{
    uint64_t v = lp_hmap_get_or_put(m, k, nv, isnew);
    return v == LP_HMAP_EMPTY ? UINT32_MAX : (uint32_t)v;
}

static inline uint32_t kmap_get(const lp_hmap *m, uint64_t k)
{
    uint64_t v;
    return lp_hmap_get(m, k, &v) ? (uint32_t)v : UINT32_MAX;
}

/* ---- sharding ---------------------------------------------------------------------- */

typedef struct shard_work {
    rl_shard *sh;
    size_t nsh;
    atomic_size_t next;
    atomic_uint_fast64_t bytes;
    uint64_t total;
    const lp_reqlog_opts *o;
} shard_work;

static lp_status shard_worker(void *ctx, size_t tid, size_t n, lp_error *err)
{
    shard_work *w = ctx;
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->nsh)
            break;
        struct timespec t0, t1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        rl_shard_run(&w->sh[i]);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        w->sh[i].cpu_ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
        if (tid == 0 && w->o->progress)
            w->o->progress(w->o->progress_ctx, "reading", atomic_load(&w->bytes), w->total);
    }
    return LP_OK;
}

/* Read the first content line of a plain file to decide its layout. Returns 1 if a
 * layout was decided, 0 if the worker should do it (nothing found, or a problem it
 * must report at its line), -1 on out of memory. */
static int plain_layout(int fd, const char *path, const lp_reqlog_opts *o, rl_layout *L)
{
    size_t cap = 65536, len = 0;
    char *buf = lp_malloc(cap);
    if (!buf)
        return -1;
    uint64_t off = 0, lstart = 0;
    int rc = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= RL_MAXLINE)
                break;
            char *nb = lp_realloc(buf, cap * 2);
            if (!nb) {
                rc = -1;
                break;
            }
            buf = nb, cap *= 2;
        }
        ssize_t k = pread(fd, buf + len, cap - len, (off_t)(off + len));
        if (k <= 0 && len == 0)
            break;
        if (k > 0)
            len += (size_t)k;
        char *nl = memchr(buf, '\n', len);
        if (!nl && k > 0)
            continue;
        size_t e = nl ? (size_t)(nl - buf) : len;
        size_t n = e;
        if (n && buf[n - 1] == '\r')
            n--;
        size_t i = 0;
        while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        if (i < n && buf[i] != '#') {
            lp_error e2;
            lp_error_clear(&e2);
            if (o->host_from_name)
                rl_host_from_path(path, L->host, sizeof L->host);
            L->header_off = lstart;
            lp_status st = rl_layout_detect(L, buf, n, path, o, &e2);
            rc = st == LP_OK ? 1 : st == LP_ERR_NOMEM ? -1 : 0;
            break;
        }
        if (!nl)
            break;
        /* drop the line and continue */
        lstart += e + 1;
        memmove(buf, buf + e + 1, len - e - 1);
        off += e + 1;
        len -= e + 1;
    }
    lp_free(buf);
    return rc;
}

/* ---- the per-request pass -------------------------------------------------------------- */

enum { PROB_DUP = 1, PROB_BACK = 2 };

typedef struct prob {
    uint32_t src, other;    /* the offending record and the earlier one */
    uint32_t req;
    uint8_t kind;
} prob;

typedef struct rq_thread {
    /* scratch */
    lp_reqrow *tmp;
    int64_t *tmpseq;
    size_t captmp;
    uint64_t *tstamp;       /* per task: request + 1 of the last use */
    uint32_t *tcount, *toff;
    uint32_t *tlist;
    uint64_t *pstamp;       /* per point */
    uint32_t *pfirst;
    /* output */
    prob *probs;
    size_t nprobs, capprobs;
    lp_hmap segs;           /* (point a << 32 | point b) -> local segment */
    uint64_t *lkeys;        /* local segment -> key */
    uint8_t *lcross;
    size_t caplk;
    uint32_t nlocal;
    uint32_t *lmap;         /* local -> canonical (filled later) */
    int64_t tmin, tmax;     /* over the good requests' records */
    int nomem;
} rq_thread;

typedef struct rq_ctx {
    lp_reqlog *rl;
    int64_t *seq;
    rq_thread *th;
    int pass;               /* 1: sort/check/intern; 2: remap */
} rq_ctx;

static int add_prob(rq_thread *T, uint8_t kind, uint32_t src, uint32_t other, uint32_t req)
{
    if (T->nprobs == T->capprobs) {
        void *p = T->probs;
        size_t c = T->capprobs;
        if (lp_grow(&p, &c, T->nprobs + 1, sizeof *T->probs))
            return -1;
        T->probs = p;
        T->capprobs = c;
    }
    T->probs[T->nprobs++] = (prob){src, other, req, kind};
    return 0;
}

static int local_seg(rq_thread *T, uint32_t a, uint32_t b, int cross, uint32_t *out)
{
    uint64_t k = (uint64_t)a << 32 | b;
    int isnew;
    uint32_t v = kmap_put(&T->segs, k, T->nlocal, &isnew);
    if (v == UINT32_MAX)
        return -1;
    if (isnew) {
        if (T->nlocal == T->caplk) {
            size_t c = T->caplk, c2 = T->caplk;
            void *p = T->lkeys, *q = T->lcross;
            if (lp_grow(&p, &c, T->nlocal + 1, sizeof *T->lkeys))
                return -1;
            T->lkeys = p;
            if (lp_grow(&q, &c2, T->nlocal + 1, 1))
                return -1;
            T->lcross = q;
            T->caplk = c < c2 ? c : c2;
        }
        T->lkeys[T->nlocal] = k;
        T->lcross[T->nlocal] = 0;
        T->nlocal++;
    }
    if (cross)
        T->lcross[v] = 1;
    *out = v;
    return 0;
}

/* Sort one request's records by (task, order), check its rules, intern its segments. */
/* The n records of request r sorted by task (stable; tasks by id), and within a task
 * by seq then input order when there is a seq column, into T->tmp; returns the number
 * of tasks (T->tlist, T->tcount). */
static uint32_t sort_by_task(rq_ctx *C, rq_thread *T, uint64_t r, const lp_reqrow *rows, const int64_t *seq, size_t n)
{
    lp_reqlog *rl = C->rl;
    /* stable bucket sort by task */
    uint64_t stamp = r + 1;
    uint32_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = rl->pt_task[rows[i].point];
        if (T->tstamp[t] != stamp) {
            T->tstamp[t] = stamp;
            T->tcount[t] = 0;
            T->tlist[nt++] = t;
        }
        T->tcount[t]++;
    }
    for (uint32_t i = 1; i < nt; i++) { /* few tasks: insertion sort by id */
        uint32_t x = T->tlist[i], j = i;
        while (j > 0 && T->tlist[j - 1] > x) {
            T->tlist[j] = T->tlist[j - 1];
            j--;
        }
        T->tlist[j] = x;
    }
    uint32_t off = 0;
    for (uint32_t i = 0; i < nt; i++) {
        T->toff[T->tlist[i]] = off;
        off += T->tcount[T->tlist[i]];
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t t = rl->pt_task[rows[i].point];
        uint32_t at = T->toff[t]++;
        T->tmp[at] = rows[i];
        if (seq)
            T->tmpseq[at] = seq[i];
    }
    if (seq) {
        /* within a task: by seq, then input order (insertion sort: usually sorted) */
        size_t s0 = 0;
        for (uint32_t ti = 0; ti < nt; ti++) {
            size_t cnt = T->tcount[T->tlist[ti]];
            for (size_t i = s0 + 1; i < s0 + cnt; i++) {
                lp_reqrow x = T->tmp[i];
                int64_t xs = T->tmpseq[i];
                size_t j = i;
                while (j > s0 && (T->tmpseq[j - 1] > xs || (T->tmpseq[j - 1] == xs && T->tmp[j - 1].src > x.src))) {
                    T->tmp[j] = T->tmp[j - 1];
                    T->tmpseq[j] = T->tmpseq[j - 1];
                    j--;
                }
                T->tmp[j] = x;
                T->tmpseq[j] = xs;
            }
            s0 += cnt;
        }
    }
    return nt;
}

/* The two rules on request r's records sorted by task (nt tasks): each <event, task>
 * once, and no time going backwards within a task on one host. Returns 1 if a rule is
 * broken (problems added to T), 0 if not, -1 when out of memory. */
static int check_rules(rq_thread *T, lp_reqrow *rows, uint64_t r, uint32_t nt)
{
    uint64_t stamp = r + 1;
    int bad = 0;
    size_t s0 = 0;
    for (uint32_t ti = 0; ti < nt; ti++) {
        size_t cnt = T->tcount[T->tlist[ti]];
        /* last (time, record) per host within the task: few hosts, linear search */
        uint32_t hh[16];
        int64_t ht[16];
        uint32_t hs[16];
        int nh = 0;
        for (size_t i = s0; i < s0 + cnt; i++) {
            lp_reqrow *w = &rows[i];
            if (T->pstamp[w->point] == stamp) {
                if (add_prob(T, PROB_DUP, w->src, T->pfirst[w->point], (uint32_t)r))
                    return -1;
                bad = 1;
                continue;
            }
            T->pstamp[w->point] = stamp;
            T->pfirst[w->point] = w->src;
            int k;
            for (k = 0; k < nh && hh[k] != w->host; k++)
                ;
            if (k < nh) {
                if (w->time < ht[k]) {
                    if (add_prob(T, PROB_BACK, w->src, hs[k], (uint32_t)r))
                        return -1;
                    bad = 1;
                }
                ht[k] = w->time;
                hs[k] = w->src;
            } else if (nh < 16) {
                hh[nh] = w->host, ht[nh] = w->time, hs[nh] = w->src, nh++;
            } else {
                /* many hosts in one task: linear scan back for the previous record there */
                for (size_t q = i; q-- > s0;)
                    if (rows[q].host == w->host) {
                        if (w->time < rows[q].time) {
                            if (add_prob(T, PROB_BACK, w->src, rows[q].src, (uint32_t)r))
                                return -1;
                            bad = 1;
                        }
                        break;
                    }
            }
        }
        s0 += cnt;
    }
    return bad;
}

static int one_request(rq_ctx *C, rq_thread *T, uint64_t r)
{
    lp_reqlog *rl = C->rl;
    uint64_t a = rl->rfirst[r], b = rl->rfirst[r + 1];
    size_t n = (size_t)(b - a);
    lp_reqrow *rows = rl->rows + a;
    int64_t *seq = C->seq ? C->seq + a : NULL;
    if (n == 0) /* a request known only from malformed lines */
        return 0;
    if (n > T->captmp) {
        size_t nc = n * 2;
        lp_reqrow *t = lp_reallocarray(T->tmp, nc, sizeof *t);
        if (!t)
            return -1;
        T->tmp = t;
        if (C->seq) {
            int64_t *s = lp_reallocarray(T->tmpseq, nc, sizeof *s);
            if (!s)
                return -1;
            T->tmpseq = s;
        }
        T->captmp = nc;
    }
    uint32_t nt = sort_by_task(C, T, r, rows, seq, n);
    memcpy(rows, T->tmp, n * sizeof *rows);
    int bad = check_rules(T, rows, r, nt);
    if (bad < 0)
        return -1;
    if (bad || rl->rbad[r]) {
        rl->rbad[r] = 1;
        for (size_t i = 0; i < n; i++)
            rows[i].seg = LP_REQLOG_NONE;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (rows[i].time < T->tmin)
            T->tmin = rows[i].time;
        if (rows[i].time > T->tmax)
            T->tmax = rows[i].time;
        if (i + 1 < n && rl->pt_task[rows[i + 1].point] == rl->pt_task[rows[i].point]) {
            if (local_seg(T, rows[i].point, rows[i + 1].point, rows[i].host != rows[i + 1].host, &rows[i].seg))
                return -1;
        } else {
            rows[i].seg = LP_REQLOG_NONE;
        }
    }
    return 0;
}

static lp_status rq_worker(void *ctx, size_t tid, size_t nthr, lp_error *err)
{
    rq_ctx *C = ctx;
    rq_thread *T = &C->th[tid];
    uint64_t lo, hi;
    lp_pool_range(C->rl->nreqs, tid, nthr, &lo, &hi);
    if (C->pass == 1) {
        for (uint64_t r = lo; r < hi && !T->nomem; r++)
            if (one_request(C, T, r))
                T->nomem = 1;
    } else {
        lp_reqrow *rows = C->rl->rows;
        for (uint64_t i = C->rl->rfirst[lo]; i < C->rl->rfirst[hi]; i++)
            if (rows[i].seg != LP_REQLOG_NONE)
                rows[i].seg = T->lmap[rows[i].seg];
    }
    return LP_OK;
}

static int prob_cmp(const void *x, const void *y)
{
    const prob *a = x, *b = y;
    return a->src < b->src ? -1 : a->src > b->src;
}

/* canonical segment order */
typedef struct segkey {
    uint64_t key;
    uint32_t task, from, to;
    uint8_t cross;
    const char *tn, *fn, *en; /* names, for sorting */
} segkey;

static int seg_cmp(const void *x, const void *y)
{
    const segkey *a = x, *b = y;
    int c = strcmp(a->tn, b->tn);
    if (!c)
        c = strcmp(a->fn, b->fn);
    if (!c)
        c = strcmp(a->en, b->en);
    return c;
}

/* ---- provenance ---------------------------------------------------------------------- */

const char *lp_reqlog_where(const lp_reqlog *rl, uint32_t src, uint64_t *line)
{
    *line = 0;
    if (!rl->nsrcs)
        return "?";
    uint32_t lo = 0, hi = rl->nsrcs;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (rl->srcs[mid].row0 <= src)
            lo = mid;
        else
            hi = mid;
    }
    const lp_reqlog_src *s = &rl->srcs[lo];
    uint64_t j = src - s->row0;
    /* c = number of skipped lines i (1-based) with skip[i] - i <= j */
    uint64_t a = 0, b = s->nskip;
    while (a < b) {
        uint64_t m = (a + b) / 2;
        if (s->skip[m] - (m + 1) <= j)
            a = m + 1;
        else
            b = m;
    }
    *line = s->line0 + (j + 1 + a) - 1;
    return rl->fname[s->file];
}

/* ---- load ------------------------------------------------------------------------------ */

typedef struct merge_work {
    rl_shard *sh;
    size_t nsh;
    lp_reqrow *rows;
    int64_t *seq;
    atomic_size_t next;
} merge_work;

/* Copy shards' records into place with global ids, freeing each shard's records. */
static lp_status merge_worker(void *ctx, size_t tid, size_t n, lp_error *err)
{
    merge_work *w = ctx;
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->nsh)
            break;
        rl_shard *s = &w->sh[i];
        lp_reqrow *dst = w->rows + s->row0;
        for (uint64_t k = 0; k < s->nrows; k++) {
            const lp_reqrow *x = &s->rows[k];
            dst[k].time = x->time;
            dst[k].point = s->m_pt[x->point];
            dst[k].host = s->m_host[x->host];
            dst[k].seg = s->m_req[x->seg];
            dst[k].src = (uint32_t)(s->row0 + k);
        }
        if (w->seq) {
            if (s->seq)
                memcpy(w->seq + s->row0, s->seq, s->nrows * sizeof *w->seq);
            else
                memset(w->seq + s->row0, 0, s->nrows * sizeof *w->seq);
        }
        lp_free(s->rows);
        s->rows = NULL;
        lp_free(s->seq);
        s->seq = NULL;
    }
    return LP_OK;
}

/* Diagnostics are collected while loading and reported at the end sorted by file and
 * line, whichever phase found them (a malformed line, a duplicate event, ...). */
typedef struct pdiag {
    uint32_t file;
    uint64_t line, seq;
    uint8_t sev, rule;
    char *msg;          /* owned; NULL if it could not be kept */
} pdiag;

typedef struct plist {
    pdiag *d;
    size_t n, cap;
} plist;

static int padd(plist *p, uint32_t file, uint64_t line, lp_severity sev, lp_rule rule, char *msg)
{
    if (p->n == p->cap) {
        void *x = p->d;
        size_t c = p->cap;
        if (lp_grow(&x, &c, p->n + 1, sizeof *p->d)) {
            lp_free(msg);
            return -1;
        }
        p->d = x;
        p->cap = c;
    }
    p->d[p->n] = (pdiag){file, line, p->n, (uint8_t)sev, (uint8_t)rule, msg};
    p->n++;
    return 0;
}

static int pcmp(const void *x, const void *y)
{
    const pdiag *a = x, *b = y;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static void pflush(plist *p, lp_diags *ds, const char *const *paths)
{
    if (p->n)
        qsort(p->d, p->n, sizeof *p->d, pcmp);
    for (size_t i = 0; i < p->n; i++) {
        lp_diags_report(ds, (lp_severity)p->d[i].sev, (lp_rule)p->d[i].rule, paths[p->d[i].file], p->d[i].line, "%s",
                        p->d[i].msg ? p->d[i].msg : "(message lost: out of memory)");
        lp_free(p->d[i].msg);
    }
    lp_free(p->d);
    memset(p, 0, sizeof *p);
}

static void pfree(plist *p)
{
    for (size_t i = 0; i < p->n; i++)
        lp_free(p->d[i].msg);
    lp_free(p->d);
    memset(p, 0, sizeof *p);
}

/* File index and line of an input position. */
static uint32_t where_file(const lp_reqlog *rl, uint32_t src, uint64_t *line)
{
    lp_reqlog_where(rl, src, line);
    uint32_t lo = 0, hi = rl->nsrcs;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (rl->srcs[mid].row0 <= src)
            lo = mid;
        else
            hi = mid;
    }
    return rl->nsrcs ? rl->srcs[lo].file : 0;
}

void lp_reqlog_free(lp_reqlog *rl)
{
    if (!rl)
        return;
    lp_strtab_release(&rl->names);
    lp_free(rl->host_name);
    lp_free(rl->task_name);
    lp_free(rl->event_name);
    lp_free(rl->pt_task);
    lp_free(rl->pt_event);
    lp_free(rl->seg_task);
    lp_free(rl->seg_from);
    lp_free(rl->seg_to);
    lp_free(rl->seg_cross);
    lp_free(rl->req_name);
    lp_free(rl->rfirst);
    lp_free(rl->rbad);
    lp_free(rl->attr_name);
    lp_free(rl->rattr);
    lp_free(rl->name_req);
    lp_free(rl->rows);
    for (uint32_t i = 0; i < rl->nfiles; i++)
        lp_free(rl->fname[i]);
    lp_free(rl->fname);
    for (uint32_t i = 0; i < rl->nsrcs; i++)
        lp_free(rl->srcs[i].skip);
    lp_free(rl->srcs);
    lp_free(rl);
}

typedef struct attrrec {
    uint32_t req, attr;
    lp_str val;
    uint32_t shard;
    uint64_t line;
} attrrec;

static lp_status load(const char *const *paths, const void *mem, size_t memlen, size_t npaths,
                      const lp_reqlog_opts *o, lp_diags *diags, lp_reqlog **out, lp_error *err);

lp_status lp_reqlog_load(const char *const *paths, size_t npaths, const lp_reqlog_opts *o, lp_diags *diags,
                         lp_reqlog **out, lp_error *err)
{
    return load(paths, NULL, 0, npaths, o, diags, out, err);
}

lp_status lp_reqlog_load_mem(const void *data, size_t n, const char *name, const lp_reqlog_opts *o, lp_diags *diags,
                             lp_reqlog **out, lp_error *err)
{
    const char *paths[1] = {name};
    return load(paths, data, n, 1, o, diags, out, err);
}

/* The state of one load, passed from stage to stage (load() below). */
typedef struct loadctx {
    const char *const *paths;
    const void *mem;
    size_t memlen, npaths;
    const lp_reqlog_opts *o;
    lp_diags *diags;
    lp_error *err;
    lp_reqlog *rl;
    unsigned nthr;
    rl_shard *sh;
    size_t nsh, capsh;
    rl_layout *lays;
    space hosts, tasks, events;
    idmap reqmap;
    lp_hmap points;
    uint32_t *namemap;
    size_t capname;
    uint32_t *reqlocal;
    size_t capreqlocal;
    uint32_t *badlist;
    size_t nbadlist, capbadlist;
    attrrec *attrs;
    size_t nattrs, capattrs;
    size_t capsrcs, capreqn;
    int64_t *seq;
    rq_thread *th;
    segkey *sk;
    lp_hmap gsegs;
    plist pend;
    lp_pool *pool; /* every parallel step (NULL: run here) */
} loadctx;

static lp_status load_nomem(loadctx *L) { return lp_error_set(L->err, LP_ERR_NOMEM, "out of memory"); }

/* (1) The shards of file f: 32 MiB ranges of a plain file (its layout decided from its
 * first line here), or the whole stream of a compressed file or stdin. */
static lp_status file_shards(loadctx *L, size_t f, uint64_t *totalbytes)
{
    const char *const *paths = L->paths;
    const lp_reqlog_opts *o = L->o;
    lp_reqlog *rl = L->rl;
    lp_error *err = L->err;
    lp_status st;
    size_t shard_bytes = o->shard_bytes ? o->shard_bytes : ((size_t)32 << 20);
    rl->fname[f] = lp_strndup(paths[f], strlen(paths[f]));
    if (!rl->fname[f])
        goto nomem;
    rl->nfiles++;
    int plain = 0;
    uint64_t size = 0, fsize = 0;
    if (!L->mem && strcmp(paths[f], "-") != 0) {
        lp_input *in;
        if ((st = lp_input_open(&in, paths[f], err)) != LP_OK)
            return st;
        const void *pk;
        size_t pn;
        st = lp_input_peek(in, &pk, &pn, err);
        lp_compression comp = lp_input_compression(in);
        lp_input_close(in);
        if (st)
            return st;
        struct stat sb;
        if (stat(paths[f], &sb) == 0 && S_ISREG(sb.st_mode))
            fsize = (uint64_t)sb.st_size;
        if (comp == LP_COMP_NONE && fsize > 0) {
            plain = 1;
            size = fsize;
        }
    }
    if (plain) {
        int fd = open(paths[f], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", paths[f], strerror(errno));
        int lr = plain_layout(fd, paths[f], o, &L->lays[f]);
        close(fd);
        if (lr < 0)
            goto nomem;
        if (lr == 0)
            plain = 0; /* the shard worker decides (and reports) */
    }
    *totalbytes += fsize;
    uint64_t nparts = plain ? (size + shard_bytes - 1) / shard_bytes : 1;
    GROW(L->sh, L->capsh, L->nsh + nparts);
    for (uint64_t k = 0; k < nparts; k++) {
        rl_shard *s = &L->sh[L->nsh++];
        memset(s, 0, sizeof *s);
        s->file = (uint32_t)f;
        s->path = paths[f];
        s->whole = !plain;
        s->begin = k * shard_bytes;
        s->end = k + 1 == nparts ? size : (k + 1) * shard_bytes;
        s->lay = &L->lays[f];
        s->opts = o;
        s->mem = L->mem;
        s->memlen = L->memlen;
    }
    return LP_OK;
nomem:
    return load_nomem(L);
}

/* (1) Every input into shards, parsed concurrently into shard-local tables. */
static lp_status read_shards(loadctx *L)
{
    lp_status st;
    uint64_t totalbytes = 0;
    size_t capfile = 0;
    GROW(L->rl->fname, capfile, L->npaths);
    for (size_t f = 0; f < L->npaths; f++)
        if ((st = file_shards(L, f, &totalbytes)))
            return st;
    rl_shard *sh = L->sh;
    size_t nsh = L->nsh;
    shard_work w;
    memset(&w, 0, sizeof w);
    w.sh = sh;
    w.nsh = nsh;
    w.o = L->o;
    w.total = totalbytes;
    atomic_init(&w.next, 0);
    atomic_init(&w.bytes, 0);
    for (size_t i = 0; i < nsh; i++)
        sh[i].progress = &w.bytes;
    lp_pool_run(L->pool, L->nthr > nsh ? nsh : L->nthr, shard_worker, &w, NULL);
    for (size_t i = 0; i < nsh; i++)
        if (sh[i].st) {
            *L->err = sh[i].err;
            lp_error_push(L->err, "reading '%s'", sh[i].path);
            return sh[i].st;
        }
    return LP_OK;
nomem:
    return load_nomem(L);
}

/* (2) Which order the tasks' events take: the seq column when every file has one. */
static void decide_seq(loadctx *L)
{
    rl_shard *sh = L->sh;
    int seq_files = 0, noseq_files = 0;
    for (size_t f = 0; f < L->npaths; f++) {
        int has = 0, known = 0;
        for (size_t i = 0; i < L->nsh; i++)
            if (sh[i].file == f && (sh[i].nrows || !sh[i].whole)) {
                known = 1;
                has = sh[i].lay->have[LP_RL_SEQ];
                break;
            }
        if (known)
            has ? seq_files++ : noseq_files++;
    }
    L->rl->has_seq = seq_files > 0 && noseq_files == 0;
    if (seq_files && noseq_files)
        lp_diags_report(L->diags, LP_SEV_WARNING, LP_RULE_FIELD, NULL, 0,
                        "%d file(s) have a seq column and %d do not: ordering tasks' events by input order",
                        seq_files, noseq_files);
}

/* (2) Shard s's local ids to global ones: names, <task, event> points, requests, hosts
 * (s->m_pt, m_req, m_host). */
static lp_status map_shard(loadctx *L, rl_shard *s)
{
    lp_reqlog *rl = L->rl;
    /* names: local name id -> global name id, lazily */
    GROW(L->namemap, L->capname, s->names.n);
    memset(L->namemap, 0xff, s->names.n * sizeof *L->namemap);
    uint32_t *nm = L->namemap;
#define GNAME(local, outv)                                                                                  \
    do {                                                                                                   \
        if (nm[local] == UINT32_MAX) {                                                                     \
            lp_str g_;                                                                                     \
            if (lp_strtab_intern(&rl->names, lp_strtab_get(&s->names, (local)),                            \
                                 lp_strtab_len(&s->names, (local)), &g_))                                  \
                goto nomem;                                                                                \
            nm[local] = g_;                                                                                \
        }                                                                                                  \
        (outv) = nm[local];                                                                                \
    } while (0)
    /* points */
    uint32_t *pm = lp_malloc((s->npts ? s->npts : 1) * sizeof *pm);
    if (!pm)
        goto nomem;
    s->m_pt = pm; /* freed with the shard */
    for (uint32_t p = 0; p < s->npts; p++) {
        lp_str tn, en;
        uint32_t t, e;
        GNAME(s->pt_task[p], tn);
        GNAME(s->pt_event[p], en);
        if (space_id(&L->tasks, tn, &t) || space_id(&L->events, en, &e)) {
            goto nomem;
        }
        int isnew;
        uint32_t g = kmap_put(&L->points, (uint64_t)t << 32 | e, rl->npoints, &isnew);
        if (g == UINT32_MAX) {
            goto nomem;
        }
        if (isnew) {
            size_t c1 = rl->npoints, c2 = rl->npoints;
            void *x = rl->pt_task, *y = rl->pt_event;
            if (lp_grow(&x, &c1, rl->npoints + 1, sizeof(uint32_t))) {
                goto nomem;
            }
            rl->pt_task = x;
            if (lp_grow(&y, &c2, rl->npoints + 1, sizeof(uint32_t))) {
                goto nomem;
            }
            rl->pt_event = y;
            rl->pt_task[rl->npoints] = t;
            rl->pt_event[rl->npoints] = e;
            rl->npoints++;
        }
        pm[p] = g;
    }
    /* requests */
    GROW(L->reqlocal, L->capreqlocal, s->reqs.n);
    uint32_t *reqlocal = L->reqlocal;
    if (s->reqs.n)
        reqlocal[0] = UINT32_MAX; /* id 0 is the empty string: never a request */
    for (uint32_t q = 1; q < s->reqs.n; q++) {
        lp_str g;
        if (lp_strtab_intern(&rl->names, lp_strtab_get(&s->reqs, q), lp_strtab_len(&s->reqs, q), &g)) {
            goto nomem;
        }
        uint32_t v;
        if (idmap_get(&L->reqmap, g, &v)) {
            goto nomem;
        }
        if (v == UINT32_MAX) {
            if (rl->nreqs >= UINT32_MAX - 2)
                return lp_error_set(L->err, LP_ERR_LIMIT, "more than %u requests", UINT32_MAX - 2);
            if (rl->nreqs == L->capreqn) {
                void *x = rl->req_name;
                size_t c = L->capreqn;
                if (lp_grow(&x, &c, rl->nreqs + 1, sizeof *rl->req_name)) {
                        goto nomem;
                }
                rl->req_name = x;
                L->capreqn = c;
            }
            rl->req_name[rl->nreqs] = g;
            v = (uint32_t)rl->nreqs++;
            L->reqmap.v[g] = v;
        }
        reqlocal[q] = v;
    }
    /* hosts: the local names this shard used as hosts */
    s->m_host = lp_malloc((s->names.n ? s->names.n : 1) * sizeof *s->m_host);
    if (!s->m_host) {
        goto nomem;
    }
    for (uint32_t x = 0; x < s->names.n; x++) {
        s->m_host[x] = UINT32_MAX;
        if (x < s->capishost && s->ishost[x]) {
            lp_str hn;
            GNAME(x, hn);
            if (space_id(&L->hosts, hn, &s->m_host[x])) {
                goto nomem;
            }
        }
    }
#undef GNAME
    s->m_req = lp_malloc((s->reqs.n ? s->reqs.n : 1) * sizeof *s->m_req);
    if (!s->m_req)
        goto nomem;
    memcpy(s->m_req, reqlocal, s->reqs.n * sizeof *s->m_req);
    return LP_OK;
nomem:
    return load_nomem(L);
}

/* (2) What shard s found beside its records, taken over once they are copied: its
 * diagnostics (reported at the end in file and line order), malformed requests,
 * attribute values and the provenance of its rows; then the shard is freed. */
static lp_status collect_shard(loadctx *L, rl_shard *s)
{
    lp_reqlog *rl = L->rl;
    uint32_t *reqlocal2 = s->m_req;
    for (size_t d = 0; d < s->ndiags; d++) {
        char *mm = s->diags[d].msg; /* ownership moves to the list */
        s->diags[d].msg = NULL;
        if (padd(&L->pend, s->file, s->line0 + s->diags[d].line - 1, (lp_severity)s->diags[d].sev,
                 (lp_rule)s->diags[d].rule, mm))
            goto nomem;
    }
    for (size_t q = 0; q < s->nbadreq; q++) {
        GROW(L->badlist, L->capbadlist, L->nbadlist + 1);
        L->badlist[L->nbadlist++] = reqlocal2[s->badreq[q]];
    }
    for (size_t q = 0; q < s->nav; q++) {
        GROW(L->attrs, L->capattrs, L->nattrs + 1);
        lp_str g;
        if (lp_strtab_intern(&rl->names, lp_strtab_get(&s->names, s->av[q].val),
                             lp_strtab_len(&s->names, s->av[q].val), &g))
            goto nomem;
        L->attrs[L->nattrs++] = (attrrec){reqlocal2[s->av[q].req], s->av[q].attr, g, (uint32_t)s->file,
                                          s->line0 + s->av[q].line - 1};
    }
    /* provenance */
    lp_reqlog_src *ps = &rl->srcs[rl->nsrcs++];
    ps->file = s->file;
    ps->row0 = s->row0;
    ps->nrows = s->nrows;
    ps->line0 = s->line0;
    ps->skip = s->skip;
    ps->nskip = s->nskip;
    rl->parse_cpu_ns += s->cpu_ns;
    s->skip = NULL;
    rl_shard_release(s);
    return LP_OK;
nomem:
    return load_nomem(L);
}

/* (2) The shards merged in order into one table: local ids mapped to global ones, the
 * records copied concurrently (each shard freed once copied). */
static lp_status merge_shards(loadctx *L)
{
    lp_reqlog *rl = L->rl;
    rl_shard *sh = L->sh;
    size_t nsh = L->nsh;
    lp_status st;
    decide_seq(L);
    uint64_t total = 0;
    for (size_t i = 0; i < nsh; i++)
        total += sh[i].nrows;
    if (total >= UINT32_MAX)
        return lp_error_set(L->err, LP_ERR_LIMIT, "more than %u records", UINT32_MAX - 1);
    rl->rows = lp_malloc((total ? total : 1) * sizeof *rl->rows);
    if (!rl->rows)
        goto nomem;
    if (rl->has_seq) {
        L->seq = lp_malloc((total ? total : 1) * sizeof *L->seq);
        if (!L->seq)
            goto nomem;
    }
    GROW(rl->srcs, L->capsrcs, nsh);
    uint64_t line0 = 1;
    for (size_t i = 0; i < nsh; i++) {
        rl_shard *s = &sh[i];
        if (i == 0 || s->file != sh[i - 1].file)
            line0 = 1;
        s->line0 = line0;
        line0 += s->nlines;
        s->row0 = rl->nrows;
        rl->nlines += s->nlines;
        rl->nbadlines += s->nbadlines;
        if ((st = map_shard(L, s)))
            return st;
        rl->nrows += s->nrows;
    }
    /* records: copied concurrently, each shard freed once copied */
    merge_work mw;
    memset(&mw, 0, sizeof mw);
    mw.sh = sh;
    mw.nsh = nsh;
    mw.rows = rl->rows;
    mw.seq = L->seq;
    atomic_init(&mw.next, 0);
    lp_pool_run(L->pool, L->nthr, merge_worker, &mw, NULL);
    for (size_t i = 0; i < nsh; i++)
        if ((st = collect_shard(L, &sh[i])))
            return st;
    lp_free(L->sh);
    L->sh = NULL;
    L->nsh = 0;
    rl->host_name = L->hosts.names;
    rl->nhosts = L->hosts.n;
    L->hosts.names = NULL;
    rl->task_name = L->tasks.names;
    rl->ntasks = L->tasks.n;
    L->tasks.names = NULL;
    rl->event_name = L->events.names;
    rl->nevents = L->events.n;
    L->events.names = NULL;
    rl->name_req = L->reqmap.v;
    rl->nname_req = (uint32_t)L->reqmap.n;
    L->reqmap.v = NULL;
    rl->rfirst = lp_calloc(rl->nreqs + 1, sizeof *rl->rfirst);
    rl->rbad = lp_calloc(rl->nreqs ? rl->nreqs : 1, 1);
    if (!rl->rfirst || !rl->rbad)
        goto nomem;
    for (size_t i = 0; i < L->nbadlist; i++)
        rl->rbad[L->badlist[i]] = 1;
    return LP_OK;
nomem:
    return load_nomem(L);
}

/* (2) The requests' attributes from the attribute columns (the first value wins; a
 * different later one is reported). */
static lp_status set_attrs(loadctx *L)
{
    lp_reqlog *rl = L->rl;
    const lp_reqlog_opts *o = L->o;
    const attrrec *attrs = L->attrs;
    rl->nattrs = o->nattr;
    if (!o->nattr)
        return LP_OK;
    rl->attr_name = lp_malloc(o->nattr * sizeof *rl->attr_name);
    rl->rattr = lp_malloc((size_t)o->nattr * (rl->nreqs ? rl->nreqs : 1) * sizeof *rl->rattr);
    if (!rl->attr_name || !rl->rattr)
        return load_nomem(L);
    memset(rl->rattr, 0xff, (size_t)o->nattr * rl->nreqs * sizeof *rl->rattr);
    for (unsigned a = 0; a < o->nattr; a++)
        if (lp_strtab_intern(&rl->names, o->attr_name[a], strlen(o->attr_name[a]), &rl->attr_name[a]))
            return load_nomem(L);
    for (size_t i = 0; i < L->nattrs; i++) {
        lp_str *slot = &rl->rattr[(size_t)attrs[i].attr * rl->nreqs + attrs[i].req];
        if (*slot == LP_STR_NONE)
            *slot = attrs[i].val;
        else if (*slot != attrs[i].val) {
            char msg[900];
            snprintf(msg, sizeof msg,
                     "attribute %.100s of request %.200s is '%.200s' here but '%.200s' earlier; keeping the first",
                     o->attr_name[attrs[i].attr], lp_reqlog_str(rl, rl->req_name[attrs[i].req]),
                     lp_reqlog_str(rl, attrs[i].val), lp_reqlog_str(rl, *slot));
            if (padd(&L->pend, attrs[i].shard, attrs[i].line, LP_SEV_WARNING, LP_RULE_FIELD,
                     lp_strndup(msg, strlen(msg))))
                return load_nomem(L);
        }
    }
    return LP_OK;
}

/* (3) Records grouped by request: nothing to do when each request's lines are
 * contiguous, else a stable counting sort applied in place by following cycles. */
static lp_status group_requests(loadctx *L)
{
    lp_reqlog *rl = L->rl;
    int64_t *seq = L->seq;
    /* already grouped when the rows' requests never decrease: requests are numbered in
     * order of first appearance, but a request first named by a malformed line (no row)
     * can get its number before a request whose rows come first, so a check that each
     * request's rows are merely contiguous is not enough */
    int grouped = 1;
    for (uint64_t i = 1; i < rl->nrows && grouped; i++)
        grouped = rl->rows[i].seg >= rl->rows[i - 1].seg;
    for (uint64_t i = 0; i < rl->nrows; i++)
        rl->rfirst[rl->rows[i].seg + 1]++;
    for (uint64_t q = 0; q < rl->nreqs; q++)
        rl->rfirst[q + 1] += rl->rfirst[q];
    if (grouped)
        return LP_OK; /* rows are already in place */
    uint32_t *dest = lp_malloc((rl->nrows ? rl->nrows : 1) * sizeof *dest);
    uint64_t *fill = lp_malloc((rl->nreqs ? rl->nreqs : 1) * sizeof *fill);
    if (!dest || !fill) {
        lp_free(fill);
        lp_free(dest);
        return load_nomem(L);
    }
    memcpy(fill, rl->rfirst, rl->nreqs * sizeof *fill);
    for (uint64_t i = 0; i < rl->nrows; i++)
        dest[i] = (uint32_t)fill[rl->rows[i].seg]++;
    lp_free(fill);
    for (uint64_t i = 0; i < rl->nrows; i++) {
        while (dest[i] != i) {
            uint32_t d = dest[i];
            lp_reqrow t = rl->rows[d];
            rl->rows[d] = rl->rows[i];
            rl->rows[i] = t;
            if (seq) {
                int64_t u = seq[d];
                seq[d] = seq[i];
                seq[i] = u;
            }
            dest[i] = dest[d];
            dest[d] = d;
        }
    }
    lp_free(dest);
    return LP_OK;
}

/* (4) Per request, concurrently: events sorted by task and order, the rules checked,
 * segment keys interned in thread-local tables. */
static lp_status per_request(loadctx *L, rq_ctx *C)
{
    lp_reqlog *rl = L->rl;
    unsigned nthr = L->nthr;
    rq_thread *th = L->th = lp_calloc(nthr, sizeof *th);
    if (!th)
        return load_nomem(L);
    for (unsigned t = 0; t < nthr; t++) {
        th[t].tmin = INT64_MAX;
        th[t].tmax = INT64_MIN;
        th[t].tstamp = lp_calloc(rl->ntasks ? rl->ntasks : 1, sizeof *th[t].tstamp);
        th[t].tcount = lp_malloc((rl->ntasks ? rl->ntasks : 1) * sizeof *th[t].tcount);
        th[t].toff = lp_malloc((rl->ntasks ? rl->ntasks : 1) * sizeof *th[t].toff);
        th[t].tlist = lp_malloc((rl->ntasks ? rl->ntasks : 1) * sizeof *th[t].tlist);
        th[t].pstamp = lp_calloc(rl->npoints ? rl->npoints : 1, sizeof *th[t].pstamp);
        th[t].pfirst = lp_malloc((rl->npoints ? rl->npoints : 1) * sizeof *th[t].pfirst);
        if (!th[t].tstamp || !th[t].tcount || !th[t].toff || !th[t].tlist || !th[t].pstamp || !th[t].pfirst)
            return load_nomem(L);
    }
    *C = (rq_ctx){rl, L->seq, th, 1};
    lp_pool_run(L->pool, nthr, rq_worker, C, NULL);
    for (unsigned t = 0; t < nthr; t++)
        if (th[t].nomem)
            return load_nomem(L);
    lp_free(L->seq);
    L->seq = NULL;
    return LP_OK;
}

/* (5) One problem found by the per-request pass, as a diagnostic at its record. */
static int problem_diag(loadctx *L, const prob *p)
{
    lp_reqlog *rl = L->rl;
    /* the records of a problem request were reordered: find them by src */
    const lp_reqrow *x = NULL, *y = NULL;
    for (uint64_t k = rl->rfirst[p->req]; k < rl->rfirst[p->req + 1]; k++) {
        if (rl->rows[k].src == p->src)
            x = &rl->rows[k];
        if (rl->rows[k].src == p->other)
            y = &rl->rows[k];
    }
    if (!x || !y)
        return 0;
    uint64_t oline;
    const char *of = lp_reqlog_where(rl, p->other, &oline);
    char msg[900];
    const char *tn = lp_reqlog_str(rl, rl->task_name[rl->pt_task[x->point]]);
    const char *en = lp_reqlog_str(rl, rl->event_name[rl->pt_event[x->point]]);
    const char *rn = lp_reqlog_str(rl, rl->req_name[p->req]);
    uint64_t ln;
    uint32_t fi = where_file(rl, p->src, &ln);
    if (p->kind == PROB_DUP) {
        snprintf(msg, sizeof msg,
                 "duplicate <event, task> <%.100s, %.100s> in request %.100s (first at %.200s:%llu); "
                 "request excluded",
                 en, tn, rn, of, (unsigned long long)oline);
        return padd(&L->pend, fi, ln, LP_SEV_ERROR, LP_RULE_IMPORT, lp_strndup(msg, strlen(msg)));
    }
    snprintf(msg, sizeof msg,
             "time goes backwards on host %.100s in task %.100s of request %.100s: event %.100s at "
             "%lld ns after %.100s at %lld ns (%.200s:%llu); request excluded",
             lp_reqlog_str(rl, rl->host_name[x->host]), tn, rn, en, (long long)x->time,
             lp_reqlog_str(rl, rl->event_name[rl->pt_event[y->point]]), (long long)y->time, of,
             (unsigned long long)oline);
    return padd(&L->pend, fi, ln, LP_SEV_ERROR, LP_RULE_ORDER, lp_strndup(msg, strlen(msg)));
}

/* (5) The problems of all threads, in input order, then every diagnostic of the load
 * in file and line order. */
static lp_status report_problems(loadctx *L)
{
    lp_reqlog *rl = L->rl;
    rq_thread *th = L->th;
    size_t np = 0;
    for (unsigned t = 0; t < L->nthr; t++)
        np += th[t].nprobs;
    prob *all = lp_malloc((np ? np : 1) * sizeof *all);
    if (!all)
        return load_nomem(L);
    np = 0;
    for (unsigned t = 0; t < L->nthr; t++) {
        if (th[t].nprobs)
            memcpy(all + np, th[t].probs, th[t].nprobs * sizeof *all);
        np += th[t].nprobs;
    }
    qsort(all, np, sizeof *all, prob_cmp);
    for (size_t i = 0; i < np; i++)
        if (problem_diag(L, &all[i])) {
            lp_free(all);
            return load_nomem(L);
        }
    lp_free(all);
    for (uint64_t q = 0; q < rl->nreqs; q++)
        rl->nbad += rl->rbad[q];
    pflush(&L->pend, L->diags, L->paths);
    return LP_OK;
}

/* (5) Segment ids made canonical (sorted by names) and written into the records. */
static lp_status canonical_segments(loadctx *L, rq_ctx *C)
{
    lp_reqlog *rl = L->rl;
    rq_thread *th = L->th;
    unsigned nthr = L->nthr;
    size_t capsk = 0, nsk = 0;
    for (unsigned t = 0; t < nthr; t++) {
        th[t].lmap = lp_malloc((th[t].nlocal ? th[t].nlocal : 1) * sizeof *th[t].lmap);
        if (!th[t].lmap)
            goto nomem;
        for (uint32_t l = 0; l < th[t].nlocal; l++) {
            int isnew;
            uint32_t g = kmap_put(&L->gsegs, th[t].lkeys[l], (uint32_t)nsk, &isnew);
            if (g == UINT32_MAX)
                goto nomem;
            if (isnew) {
                GROW(L->sk, capsk, nsk + 1);
                uint64_t k = th[t].lkeys[l];
                uint32_t pa = (uint32_t)(k >> 32), pb = (uint32_t)k;
                L->sk[nsk] = (segkey){k, rl->pt_task[pa], rl->pt_event[pa], rl->pt_event[pb], 0,
                                      lp_reqlog_str(rl, rl->task_name[rl->pt_task[pa]]),
                                      lp_reqlog_str(rl, rl->event_name[rl->pt_event[pa]]),
                                      lp_reqlog_str(rl, rl->event_name[rl->pt_event[pb]])};
                nsk++;
            }
            L->sk[g].cross |= th[t].lcross[l];
        }
    }
    segkey *sk = L->sk;
    if (nsk)
        qsort(sk, nsk, sizeof *sk, seg_cmp);
    rl->nsegs = (uint32_t)nsk;
    rl->seg_task = lp_malloc((nsk ? nsk : 1) * sizeof *rl->seg_task);
    rl->seg_from = lp_malloc((nsk ? nsk : 1) * sizeof *rl->seg_from);
    rl->seg_to = lp_malloc((nsk ? nsk : 1) * sizeof *rl->seg_to);
    rl->seg_cross = lp_malloc(nsk ? nsk : 1);
    if (!rl->seg_task || !rl->seg_from || !rl->seg_to || !rl->seg_cross)
        goto nomem;
    lp_hmap_release(&L->gsegs);
    for (size_t i = 0; i < nsk; i++) {
        rl->seg_task[i] = sk[i].task;
        rl->seg_from[i] = sk[i].from;
        rl->seg_to[i] = sk[i].to;
        rl->seg_cross[i] = sk[i].cross;
        int isnew;
        if (kmap_put(&L->gsegs, sk[i].key, (uint32_t)i, &isnew) == UINT32_MAX)
            goto nomem;
    }
    for (unsigned t = 0; t < nthr; t++)
        for (uint32_t l = 0; l < th[t].nlocal; l++)
            th[t].lmap[l] = kmap_get(&L->gsegs, th[t].lkeys[l]);
    C->pass = 2;
    lp_pool_run(L->pool, nthr, rq_worker, C, NULL);
    rl->min_time = INT64_MAX;
    rl->max_time = INT64_MIN;
    for (unsigned t = 0; t < nthr; t++) {
        if (th[t].tmin < rl->min_time)
            rl->min_time = th[t].tmin;
        if (th[t].tmax > rl->max_time)
            rl->max_time = th[t].tmax;
    }
    if (rl->min_time > rl->max_time)
        rl->min_time = rl->max_time = 0;
    return LP_OK;
nomem:
    return load_nomem(L);
}

/* Everything a load holds besides its result (on success or failure). */
static void load_release(loadctx *L)
{
    pfree(&L->pend);
    for (size_t i = 0; i < L->nsh; i++)
        rl_shard_release(&L->sh[i]);
    lp_free(L->sh);
    lp_free(L->lays);
    lp_free(L->hosts.names);
    lp_free(L->hosts.map.v);
    lp_free(L->tasks.names);
    lp_free(L->tasks.map.v);
    lp_free(L->events.names);
    lp_free(L->events.map.v);
    lp_free(L->reqmap.v);
    lp_hmap_release(&L->points);
    lp_free(L->namemap);
    lp_free(L->reqlocal);
    lp_free(L->badlist);
    lp_free(L->attrs);
    lp_free(L->seq);
    rq_thread *th = L->th;
    if (th) {
        for (unsigned t = 0; t < L->nthr; t++) {
            lp_free(th[t].tmp);
            lp_free(th[t].tmpseq);
            lp_free(th[t].tstamp);
            lp_free(th[t].tcount);
            lp_free(th[t].toff);
            lp_free(th[t].tlist);
            lp_free(th[t].pstamp);
            lp_free(th[t].pfirst);
            lp_free(th[t].probs);
            lp_hmap_release(&th[t].segs);
            lp_free(th[t].lkeys);
            lp_free(th[t].lcross);
            lp_free(th[t].lmap);
        }
        lp_free(th);
    }
    lp_free(L->sk);
    lp_hmap_release(&L->gsegs);
    lp_pool_free(L->pool);
}

/* The pipeline of the file header: (1) shards read concurrently, (2) merged in order
 * (with the attributes), (3) grouped by request, (4) each request checked
 * concurrently, (5) problems reported and segments made canonical. */
static lp_status load(const char *const *paths, const void *mem, size_t memlen, size_t npaths,
                      const lp_reqlog_opts *o, lp_diags *diags, lp_reqlog **out, lp_error *err)
{
    *out = NULL;
    if (npaths == 0)
        return lp_error_set(err, LP_ERR_ARG, "no input files");
    if (npaths > UINT32_MAX / 2)
        return lp_error_set(err, LP_ERR_LIMIT, "too many input files");
    lp_reqlog *rl = lp_calloc(1, sizeof *rl);
    if (!rl)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (lp_strtab_init(&rl->names)) {
        lp_strtab_release(&rl->names); /* a failed init may have allocated */
        lp_free(rl);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    loadctx L;
    memset(&L, 0, sizeof L);
    L.paths = paths;
    L.mem = mem;
    L.memlen = memlen;
    L.npaths = npaths;
    L.o = o;
    L.diags = diags;
    L.err = err;
    L.rl = rl;
    L.nthr = lp_pool_threads(o->threads, 64);
    lp_pool_new(&L.pool, L.nthr - 1, NULL); /* for every step; without it, the parts run here */
    L.lays = lp_calloc(npaths, sizeof *L.lays);
    rq_ctx C;
    lp_status st = L.lays ? LP_OK : load_nomem(&L);
    if (!st)
        st = read_shards(&L);
    if (!st)
        st = merge_shards(&L);
    if (!st)
        st = set_attrs(&L);
    if (!st) {
        lp_free(L.attrs);
        L.attrs = NULL;
        st = group_requests(&L);
    }
    if (!st)
        st = per_request(&L, &C);
    if (!st)
        st = report_problems(&L);
    if (!st)
        st = canonical_segments(&L, &C);
    if (st) {
        lp_reqlog_free(rl);
        rl = NULL;
    }
    load_release(&L);
    *out = rl;
    return st;
}

/* ---- names ----------------------------------------------------------------------------- */

const char *lp_reqlog_seg_label(const lp_reqlog *rl, uint32_t seg, char *buf, size_t n)
{
    snprintf(buf, n, "%s:%s->%s", lp_reqlog_str(rl, rl->task_name[rl->seg_task[seg]]),
             lp_reqlog_str(rl, rl->event_name[rl->seg_from[seg]]), lp_reqlog_str(rl, rl->event_name[rl->seg_to[seg]]));
    return buf;
}

uint32_t lp_reqlog_attr_find(const lp_reqlog *rl, const char *name)
{
    for (uint32_t a = 0; a < rl->nattrs; a++)
        if (strcmp(lp_reqlog_str(rl, rl->attr_name[a]), name) == 0)
            return a;
    return LP_REQLOG_NONE;
}
