/* fuzz_reqlog.c: libFuzzer target for the request-log reader (reqlog.h) and what runs
 * on whatever it accepts: skew estimation and correction, inference, pipelines, every
 * request's critical path and slack, the model file written and read back. The input
 * is read as CSV (with a header or, if the first byte is odd, by column numbers and a
 * seq column) and as JSON lines. Properties: rows grouped and in range, good requests
 * without duplicate <event, task>, slack never negative, the path's length is its sum,
 * and the model file read back gives the same segments, counts and relationships.
 * The input is also written to a file and read by the chunked reader (the mapped
 * shards' one-scan line loop, a handful of shards cut anywhere, one and two threads): the same
 * records, requests, lines and diagnostics as from memory (one stream, the general
 * line loop). */
#include "longpole/longpole.h"
#include "fuzz_check.h"
#include "longpole/import/reqlog.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/reqpath.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

/* A model read back from its file is the one written: segments, counts, and every
 * relationship bit. */
static void same_model(const lp_causal *a, const lp_causal *b)
{
    FUZZ_CHECK(b->nseg == a->nseg && b->nreq == a->nreq && b->npipe_rej == a->npipe_rej);
    for (uint32_t i = 0; i < a->nseg; i++) {
        FUZZ_CHECK(b->seg_count[i] == a->seg_count[i] && b->seg_cross[i] == a->seg_cross[i]);
        FUZZ_CHECK(!strcmp(lp_strtab_get(&a->names, a->seg_task[i]), lp_strtab_get(&b->names, b->seg_task[i])));
        for (uint32_t k = 0; k < a->nseg; k++) {
            FUZZ_CHECK(lp_causal_bit(a->hb, a->words, i, k) == lp_causal_bit(b->hb, b->words, i, k));
            FUZZ_CHECK(lp_causal_bit(a->mx, a->words, i, k) == lp_causal_bit(b->mx, b->words, i, k));
            FUZZ_CHECK(lp_causal_bit(a->seen, a->words, i, k) == lp_causal_bit(b->seen, b->words, i, k));
        }
    }
}

/* Two stores hold the same records (by name), requests, lines and diagnostics. */
static void same_store(const lp_reqlog *a, const lp_diags *da, const lp_reqlog *b, const lp_diags *db)
{
    FUZZ_CHECK(a->nrows == b->nrows && a->nreqs == b->nreqs && a->nlines == b->nlines &&
               a->nbadlines == b->nbadlines && a->nbad == b->nbad);
    FUZZ_CHECK(da->nerrors == db->nerrors && da->nwarnings == db->nwarnings);
    if (a->nrows != b->nrows || a->nreqs != b->nreqs)
        return;
    for (uint64_t r = 0; r < a->nreqs; r++) {
        FUZZ_CHECK(!strcmp(lp_reqlog_str(a, a->req_name[r]), lp_reqlog_str(b, b->req_name[r])));
        FUZZ_CHECK(a->rfirst[r] == b->rfirst[r] && a->rbad[r] == b->rbad[r]);
    }
    for (uint64_t i = 0; i < a->nrows; i++) {
        const lp_reqrow *x = &a->rows[i], *y = &b->rows[i];
        FUZZ_CHECK(x->time == y->time && x->src == y->src);
        FUZZ_CHECK(!strcmp(lp_reqlog_str(a, a->host_name[x->host]), lp_reqlog_str(b, b->host_name[y->host])));
        FUZZ_CHECK(!strcmp(lp_reqlog_str(a, a->task_name[a->pt_task[x->point]]),
                           lp_reqlog_str(b, b->task_name[b->pt_task[y->point]])));
        FUZZ_CHECK(!strcmp(lp_reqlog_str(a, a->event_name[a->pt_event[x->point]]),
                           lp_reqlog_str(b, b->event_name[b->pt_event[y->point]])));
        uint64_t la, lb;
        lp_reqlog_where(a, x->src, &la);
        lp_reqlog_where(b, y->src, &lb);
        FUZZ_CHECK(la == lb);
    }
    for (size_t k = 0; k < da->nkept && k < db->nkept; k++)
        FUZZ_CHECK(da->kept[k].line == db->kept[k].line && da->kept[k].rule == db->kept[k].rule &&
                   !strcmp(da->kept[k].msg, db->kept[k].msg));
}

/* The input read from memory and from a file in a few shards (both under the
 * file's name: messages name it). */
static void chunked(const unsigned char *data, size_t n)
{
    FILE *g = tmpfile();
    if (!g)
        return;
    if (fwrite(data, 1, n, g) != n || fflush(g) != 0) {
        fclose(g);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fileno(g));
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = 1;
    lp_error err;
    lp_diags d0;
    lp_diags_init(&d0, 64);
    lp_reqlog *a = NULL;
    if (lp_reqlog_load_mem(data, n, path, &o, &d0, &a, &err) == LP_OK) {
        const char *paths[] = {path};
        for (unsigned t = 1; t <= 2; t++) {
            o.threads = t;
            /* a few shards (each costs its own tables): cut anywhere in a line */
            o.shard_bytes = 1 + n / (2 + 3 * t) + (n ? data[n - 1] % 61 : 0);
            lp_diags d1;
            lp_diags_init(&d1, 64);
            lp_reqlog *b = NULL;
            if (lp_reqlog_load(paths, 1, &o, &d1, &b, &err) == LP_OK) {
                same_store(a, &d0, b, &d1);
                lp_reqlog_free(b);
            } else {
                FUZZ_CHECK(0); /* memory read it: the file must read too */
            }
            lp_diags_release(&d1);
        }
        lp_reqlog_free(a);
    }
    lp_diags_release(&d0);
    fclose(g);
}

static void run(const unsigned char *data, size_t n, int variant)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = 1;
    lp_error err;
    if (variant == 1) {
        lp_reqlog_opts_columns(&o, "request=1,host=2,time=3,event=4,task=5,seq=6,attr.a=7", &err);
        lp_reqlog_opts_unit(&o, "us", &err);
    } else if (variant == 2) {
        o.format = LP_RL_JSONL;
        lp_reqlog_opts_columns(&o, "seq=seq", &err);
    } else if (variant == 3) {
        lp_reqlog_opts_unit(&o, "iso", &err);
    }
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_reqlog *rl = NULL;
    if (lp_reqlog_load_mem(data, n, "fuzz.csv", &o, &ds, &rl, &err) != LP_OK) {
        lp_diags_release(&ds);
        return;
    }
    FUZZ_CHECK(rl->rfirst[rl->nreqs] == rl->nrows);
    for (uint64_t r = 0; r < rl->nreqs; r++) {
        FUZZ_CHECK(rl->rfirst[r] <= rl->rfirst[r + 1]);
        for (uint64_t i = rl->rfirst[r]; i < rl->rfirst[r + 1]; i++) {
            const lp_reqrow *w = &rl->rows[i];
            FUZZ_CHECK(w->point < rl->npoints && w->host < rl->nhosts);
            FUZZ_CHECK(w->seg == LP_REQLOG_NONE || w->seg < rl->nsegs);
            uint64_t line;
            lp_reqlog_where(rl, w->src, &line);
            FUZZ_CHECK(line >= 1);
            if (!rl->rbad[r])
                for (uint64_t k = rl->rfirst[r]; k < i; k++)
                    FUZZ_CHECK(rl->rows[k].point != w->point);
        }
    }
    lp_skew sk;
    lp_skew_opts so = {1, NULL};
    if (lp_skew_estimate(rl, &so, &sk, &err) == LP_OK) {
        lp_skew_apply(&sk, rl);
        lp_skew_release(&sk);
    }
    lp_causal m;
    if (lp_causal_init(&m, &err) == LP_OK) {
        uint32_t *map = NULL;
        lp_causal_refine_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.threads = 1;
        ro.block = 3;
        lp_causal_conv *conv = NULL;
        size_t nconv = 0;
        ro.conv = &conv;
        ro.nconv = &nconv;
        if (variant == 3)
            lp_causal_set_filter(&m, "^a", &err);
        if (lp_causal_map(&m, rl, &map, &err) == LP_OK && lp_causal_refine(&m, rl, map, &ro, &err) == LP_OK &&
            lp_causal_finish(&m, rl, map, &err) == LP_OK) {
            lp_reqpath p;
            lp_reqpath_init(&p);
            for (uint64_t r = 0; r < rl->nreqs; r++) {
                if (rl->rbad[r] || lp_reqpath_compute(&p, &m, rl, map, r, &err) != LP_OK)
                    continue;
                int64_t sum = 0;
                for (uint32_t k = 0; k < p.npath; k++)
                    sum += p.dur[p.path[k]];
                FUZZ_CHECK(sum == p.cp);
                for (uint32_t i = 0; i < p.n; i++)
                    FUZZ_CHECK(p.slack[i] >= 0 && p.dur[i] >= 0);
            }
            lp_reqpath_release(&p);
            /* the model file round-trips */
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            if (f && lp_causal_write(&m, f, &err) == LP_OK) {
                fclose(f);
                f = NULL;
                FILE *g = tmpfile();
                if (g) {
                    fwrite(buf, 1, len, g);
                    fflush(g);
                    char path[64];
                    snprintf(path, sizeof path, "/proc/self/fd/%d", fileno(g));
                    lp_causal back;
                    if (lp_causal_load(&back, path, &err) == LP_OK) {
                        same_model(&m, &back);
                        lp_causal_release(&back);
                    }
                    fclose(g);
                }
            }
            if (f)
                fclose(f);
            free(buf);
        }
        lp_free(conv);
        lp_free(map);
        lp_causal_release(&m);
    }
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    if (n > (1 << 16))
        return 0;
    run(data, n, 0);
    run(data, n, n && (data[0] & 1) ? 1 : 2);
    run(data, n, 3);
    chunked(data, n);
    return 0;
}
