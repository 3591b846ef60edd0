/* trace_fuzz.h: properties of a trace that the fuzz targets of trace readers check on
 * whatever an input gives: the trace invariants (per worker, activities in time order
 * and never overlapping; messages between existing workers), the critical path adds up
 * (the sum of its elements is its total), and round trips through the writers: the
 * binary form gives back exactly the same columns, the text form the same workers,
 * activities and messages. */
#ifndef LP_FUZZ_TRACE_H
#define LP_FUZZ_TRACE_H

#include "longpole/longpole.h"
#include "base/util.h"
#include "fuzz_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void fuzz_trace_invariants(const lp_trace *t)
{
    FUZZ_CHECK(t->wfirst[0] == 0 && t->wfirst[t->nworkers] == t->nacts);
    uint64_t gaps = 0;
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
            FUZZ_CHECK(t->astart[i] <= t->aend[i]);
            FUZZ_CHECK(i == t->wfirst[w] || t->aend[i - 1] <= t->astart[i]);
            FUZZ_CHECK(t->atype[i] < t->ntypes);
            gaps += (t->aflags[i] & LP_ACT_GAP) != 0;
        }
    FUZZ_CHECK(gaps == t->ngaps);
    for (uint64_t m = 0; m < t->nmsgs; m++)
        FUZZ_CHECK(t->msrc[m] < t->nworkers && t->mdst[m] < t->nworkers);
}

/* The critical path of the trace, if it has one: its elements' durations add up to its
 * total, and the path `cp` computes from the trace's columns (lp_cpath_trace) is the
 * PAG's, element for element. */
static inline void fuzz_trace_cpath(const lp_trace *t)
{
    lp_error err;
    lp_pag g;
    if (lp_pag_build(t, &g, &err) != LP_OK)
        return;
    lp_cpath cp, lean;
    if (lp_cpath_compute(&g, &cp, &err) == LP_OK) {
        int64_t s = 0;
        for (size_t i = 0; i < cp.n; i++) {
            FUZZ_CHECK(cp.e[i].start <= cp.e[i].end);
            s += cp.e[i].end - cp.e[i].start;
        }
        FUZZ_CHECK(s == cp.total);
        FUZZ_CHECK(lp_cpath_trace(t, &lean, &err) == LP_OK);
        FUZZ_CHECK(lean.n == cp.n && lean.total == cp.total && lean.start == cp.start &&
                   lean.ncycles == cp.ncycles);
        for (size_t i = 0; i < cp.n; i++)
            FUZZ_CHECK(lean.e[i].kind == cp.e[i].kind && lean.e[i].index == cp.e[i].index &&
                       lean.e[i].worker == cp.e[i].worker && lean.e[i].start == cp.e[i].start &&
                       lean.e[i].end == cp.e[i].end);
        lp_cpath_release(&lean);
        lp_cpath_release(&cp);
    }
    lp_pag_release(&g);
}

/* Worker of b with the name of a's worker w (names may hold NUL bytes). */
static inline uint32_t fuzz_find_worker(const lp_trace *a, uint32_t w, const lp_trace *b)
{
    const char *n = lp_trace_worker_name(a, w);
    uint32_t len = lp_strtab_len(&a->strs, a->wname[w]);
    for (uint32_t v = 0; v < b->nworkers; v++)
        if (lp_strtab_len(&b->strs, b->wname[v]) == len && !memcmp(lp_trace_worker_name(b, v), n, len))
            return v;
    return LP_NONE32;
}

/* An operator the text form writes as no operator: none, "" or "-". */
static inline int fuzz_op_blank(const lp_trace *t, lp_str op)
{
    return op == LP_STR_NONE || !strcmp(lp_trace_str(t, op), "") || !strcmp(lp_trace_str(t, op), "-");
}

/* a and b hold the same workers, activities (times, type, operator; gap activities
 * aside: a reader fills gaps itself) and messages (in total). `text`: b was read from
 * the text form, where an operator "" or "-" reads back as none. */
static inline void fuzz_trace_same_as(const lp_trace *a, const lp_trace *b, int text)
{
    FUZZ_CHECK(a->nacts - a->ngaps == b->nacts - b->ngaps);
    FUZZ_CHECK(a->nmsgs == b->nmsgs);
    for (uint32_t w = 0; w < a->nworkers; w++) {
        uint32_t v = fuzz_find_worker(a, w, b);
        uint64_t i = a->wfirst[w], k;
        if (v == LP_NONE32) { /* a worker without activities may vanish */
            for (; i < a->wfirst[w + 1]; i++)
                FUZZ_CHECK(a->aflags[i] & LP_ACT_GAP);
            continue;
        }
        k = b->wfirst[v];
        for (;; i++, k++) {
            while (i < a->wfirst[w + 1] && (a->aflags[i] & LP_ACT_GAP))
                i++;
            while (k < b->wfirst[v + 1] && (b->aflags[k] & LP_ACT_GAP))
                k++;
            if (i == a->wfirst[w + 1] || k == b->wfirst[v + 1]) {
                FUZZ_CHECK(i == a->wfirst[w + 1] && k == b->wfirst[v + 1]);
                break;
            }
            FUZZ_CHECK(a->astart[i] == b->astart[k] && a->aend[i] == b->aend[k]);
            FUZZ_CHECK(!strcmp(lp_trace_type_name(a, a->atype[i]), lp_trace_type_name(b, b->atype[k])));
            if (text && fuzz_op_blank(a, a->aop[i])) {
                FUZZ_CHECK(fuzz_op_blank(b, b->aop[k]));
                continue;
            }
            FUZZ_CHECK((a->aop[i] == LP_STR_NONE) == (b->aop[k] == LP_STR_NONE));
            FUZZ_CHECK(a->aop[i] == LP_STR_NONE || !strcmp(lp_trace_str(a, a->aop[i]), lp_trace_str(b, b->aop[k])));
        }
    }
    /* messages: the same (sender, send, receiver, receive) in total */
    int64_t sa = 0, sb = 0;
    for (uint64_t m = 0; m < a->nmsgs; m++)
        sa += a->msend[m] * 3 + a->mrecv[m] * 7;
    for (uint64_t m = 0; m < b->nmsgs; m++)
        sb += b->msend[m] * 3 + b->mrecv[m] * 7;
    FUZZ_CHECK(sa == sb);
}

static inline void fuzz_trace_same(const lp_trace *a, const lp_trace *b) { fuzz_trace_same_as(a, b, 0); }

typedef lp_status (*fuzz_writer)(const lp_trace *t, FILE *out, lp_error *err);

/* The trace written into memory (*buf: free it); the writer's status, or LP_ERR_NOMEM
 * when there is no memory stream. */
static inline lp_status fuzz_write(const lp_trace *t, fuzz_writer write, char **buf, size_t *len, lp_error *err)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f)
        return LP_ERR_NOMEM;
    lp_status st = write(t, f, err);
    fclose(f);
    return st;
}

/* The binary form written and read back: exactly the same columns (a trace whose
 * names hold NUL bytes is refused by the writer: the form cannot store them). */
static inline void fuzz_trace_lptb_roundtrip(const lp_trace *t)
{
    char *buf;
    size_t len;
    lp_error err;
    lp_status st = fuzz_write(t, lp_lptb_write, &buf, &len, &err);
    FUZZ_CHECK(st == LP_OK || st == LP_ERR_UNSUPPORTED || st == LP_ERR_NOMEM || st == LP_ERR_IO);
    if (st == LP_OK) {
        lp_input *in;
        lp_trace *b = NULL;
        if (lp_input_open_mem(&in, buf, len, "roundtrip.lptb", &err) == LP_OK) {
            st = lp_lptb_read(in, &b, NULL, NULL, &err);
            lp_input_close(in);
            if (st && st != LP_ERR_NOMEM)
                fprintf(stderr, "binary round trip: %s\n", err.msg);
            FUZZ_CHECK(st == LP_OK || st == LP_ERR_NOMEM);
        }
        if (b) {
            FUZZ_CHECK(b->nworkers == t->nworkers && b->nacts == t->nacts && b->nmsgs == t->nmsgs);
            FUZZ_CHECK(b->ntypes == t->ntypes && b->napool == t->napool && b->strs.n == t->strs.n);
            for (uint64_t i = 0; i < t->nacts; i++)
                FUZZ_CHECK(b->astart[i] == t->astart[i] && b->aend[i] == t->aend[i] && b->atype[i] == t->atype[i] &&
                           b->aop[i] == t->aop[i] && b->aattr[i] == t->aattr[i] && b->aflags[i] == t->aflags[i]);
            for (uint64_t m = 0; m < t->nmsgs; m++)
                FUZZ_CHECK(b->msrc[m] == t->msrc[m] && b->mdst[m] == t->mdst[m] && b->msend[m] == t->msend[m] &&
                           b->mrecv[m] == t->mrecv[m] && b->mid[m] == t->mid[m] && b->mattr[m] == t->mattr[m]);
            fuzz_trace_same(t, b);
            lp_trace_free(b);
        }
    }
    free(buf);
}

/* The text form written and read back: the same workers, activities and messages, for
 * a trace that the form can express: names all valid UTF-8 (the text reader refuses
 * others), no worker or type named "" or "-" (read as a missing field or none); an
 * operator "" or "-" comes back as none. */
static inline void fuzz_trace_lpt_roundtrip(const lp_trace *t)
{
    for (uint32_t i = 0; i < t->strs.n; i++)
        if (!lp_utf8_valid(t->strs.ptr[i], t->strs.len[i]))
            return;
    for (uint32_t w = 0; w < t->nworkers; w++)
        if (fuzz_op_blank(t, t->wname[w]))
            return;
    for (uint32_t ty = 0; ty < t->ntypes; ty++)
        if (fuzz_op_blank(t, t->type_name[ty]))
            return;
    char *buf;
    size_t len;
    lp_error err;
    lp_status st = fuzz_write(t, lp_lpt_write, &buf, &len, &err);
    if (st == LP_OK) {
        lp_diags ds;
        lp_diags_init(&ds, 4);
        lp_builder *b;
        if (lp_builder_new(&b, &ds, NULL, &err) == LP_OK) {
            lp_input *in;
            lp_trace *back = NULL;
            if (lp_input_open_mem(&in, buf, len, "roundtrip.lpt", &err) == LP_OK) {
                st = lp_lpt_read(b, in, NULL, &err);
                lp_input_close(in);
                FUZZ_CHECK(st == LP_OK || st == LP_ERR_NOMEM);
                if (st == LP_OK) {
                    st = lp_builder_finish(b, &back, &err); /* (consumes the builder) */
                    b = NULL;
                    if (st == LP_OK) {
                        fuzz_trace_same_as(t, back, 1);
                        lp_trace_free(back);
                    }
                }
            }
            if (b)
                lp_builder_free(b);
        }
        lp_diags_release(&ds);
    }
    free(buf);
}

#endif
