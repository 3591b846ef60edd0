/* reqstats_part.c: one part's pass 1 of the request aggregates (lp_reqstats_part,
 * reqstats.h) as bytes and back, so the requests can be split over processes and
 * analysed by one (`longpole dist requests`, docs/distributed.md).
 * Layout (host byte order: the ranks of a job are one architecture): magic "LPR1", the
 * part's size in bytes, part, nparts, n, lo, hi, C, S; violations, unknown; per segment
 * present, oncp, dur_sum, cp_sum, slack_sum and the slack histogram; per category
 * present, dur_sum, cp_sum; then the part's rows of lat, cp, nonempty, ccp, ctot,
 * cslack. Invariants: lp_reqstats_part_add of a pack fills exactly the rows the packing
 * part computed and adds its integer sums; a short buffer, another magic, a part whose
 * shape (n, C, S) or rows differ from the receiver's and its range, the receiver's own
 * part, or sums that would overflow, is LP_ERR_FORMAT, never a read or a write out of
 * bounds (the caller adds each other part once). */
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/base/dbuf.h"

#include <string.h>

#define RP_MAGIC 0x3152504cu /* "LPR1" */

#define PUT LP_DBUF_PUT
#define GET LP_DRD_GET

/* *a += b, unless it overflows (then 1: a corrupt pack). */
static int add_i64(int64_t *a, int64_t b) { return __builtin_add_overflow(*a, b, a); }
static int add_u64(uint64_t *a, uint64_t b) { return __builtin_add_overflow(*a, b, a); }

lp_status lp_reqstats_part_pack(const lp_reqstats_part *p, uint8_t **buf, size_t *len, size_t *cap, lp_error *err)
{
    lp_dbuf w = {*buf, *len, *cap, 0};
    size_t start = *len;
    uint32_t magic = RP_MAGIC;
    uint64_t size = 0, rows = p->hi - p->lo;
    const lp_reqstats *o = p->out;
    PUT(&w, magic), PUT(&w, size);
    PUT(&w, p->part), PUT(&w, p->nparts), PUT(&w, p->n), PUT(&w, p->lo), PUT(&w, p->hi), PUT(&w, p->C), PUT(&w, p->S);
    PUT(&w, o->violations), PUT(&w, o->unknown);
    for (uint32_t s = 0; s < p->S; s++) {
        const lp_reqstats_seg *g = &o->seg[s];
        PUT(&w, g->present), PUT(&w, g->oncp), PUT(&w, g->dur_sum), PUT(&w, g->cp_sum), PUT(&w, g->slack_sum);
        lp_dbuf_put(&w, g->slack_hist, sizeof g->slack_hist);
    }
    for (uint32_t c = 0; c < p->C; c++)
        PUT(&w, o->cat[c].present), PUT(&w, o->cat[c].dur_sum), PUT(&w, o->cat[c].cp_sum);
    lp_dbuf_put(&w, p->lat + p->lo, rows * sizeof *p->lat);
    lp_dbuf_put(&w, p->cp + p->lo, rows * sizeof *p->cp);
    lp_dbuf_put(&w, p->nonempty + p->lo, rows * sizeof *p->nonempty);
    size_t cells = (size_t)rows * p->C, at = (size_t)p->lo * p->C;
    lp_dbuf_put(&w, p->ccp + at, cells * sizeof *p->ccp);
    lp_dbuf_put(&w, p->ctot + at, cells * sizeof *p->ctot);
    lp_dbuf_put(&w, p->cslack + at, cells * sizeof *p->cslack);
    *buf = w.p, *len = w.n, *cap = w.cap;
    if (w.fail)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory packing part %llu of the requests",
                            (unsigned long long)p->part);
    size = (uint64_t)(*len - start);
    memcpy(*buf + start + sizeof magic, &size, sizeof size);
    return LP_OK;
}

lp_status lp_reqstats_part_add(lp_reqstats_part *p, const uint8_t *buf, size_t n, uint64_t from, lp_error *err)
{
    lp_drd g = lp_drd_init(buf, n);
    uint32_t magic = 0, C = 0, S = 0;
    uint64_t size = 0, part = 0, nparts = 0, rn = 0, lo = 0, hi = 0, elo, ehi;
    GET(&g, magic), GET(&g, size);
    GET(&g, part), GET(&g, nparts), GET(&g, rn), GET(&g, lo), GET(&g, hi), GET(&g, C), GET(&g, S);
    if (g.bad || magic != RP_MAGIC || size != n)
        return lp_error_set(err, LP_ERR_FORMAT, "the requests of part %llu: bad header", (unsigned long long)from);
    lp_reqstats_part_range(p->n, from, p->nparts, &elo, &ehi);
    if (part != from || nparts != p->nparts || rn != p->n || C != p->C || S != p->S || lo != elo || hi != ehi ||
        from == p->part)
        return lp_error_set(err, LP_ERR_FORMAT,
                            "the requests of part %llu: rows [%llu, %llu) of %llu, %u categories, %u segments, where "
                            "rows [%llu, %llu) of %llu, %u categories, %u segments were due",
                            (unsigned long long)from, (unsigned long long)lo, (unsigned long long)hi,
                            (unsigned long long)rn, C, S, (unsigned long long)elo, (unsigned long long)ehi,
                            (unsigned long long)p->n, p->C, p->S);
    uint64_t rows = hi - lo;
    size_t need = (size_t)S * (5 * 8 + sizeof p->out->seg->slack_hist) + (size_t)C * 24 + (size_t)rows * 17 +
                  (size_t)rows * C * 12 + 16;
    if (n - g.off < need)
        return lp_error_set(err, LP_ERR_FORMAT, "the requests of part %llu: %zu bytes where %zu were due",
                            (unsigned long long)from, n - g.off, need);
    lp_reqstats *o = p->out;
    uint64_t v;
    int over = 0;
    GET(&g, v), over |= add_u64(&o->violations, v);
    GET(&g, v), over |= add_u64(&o->unknown, v);
    for (uint32_t s = 0; s < S; s++) {
        lp_reqstats_seg *a = &o->seg[s], b;
        GET(&g, b.present), GET(&g, b.oncp), GET(&g, b.dur_sum), GET(&g, b.cp_sum), GET(&g, b.slack_sum);
        lp_drd_copy(&g, b.slack_hist, sizeof b.slack_hist);
        over |= add_u64(&a->present, b.present) | add_u64(&a->oncp, b.oncp);
        over |= add_i64(&a->dur_sum, b.dur_sum) | add_i64(&a->cp_sum, b.cp_sum) | add_i64(&a->slack_sum, b.slack_sum);
        for (int h = 0; h < LP_REQSTATS_HIST; h++)
            over |= add_u64(&a->slack_hist[h], b.slack_hist[h]);
    }
    for (uint32_t c = 0; c < C; c++) {
        uint64_t present;
        int64_t dur, cp;
        GET(&g, present), GET(&g, dur), GET(&g, cp);
        over |= add_u64(&o->cat[c].present, present) | add_i64(&o->cat[c].dur_sum, dur) |
                add_i64(&o->cat[c].cp_sum, cp);
    }
    if (over)
        return lp_error_set(err, LP_ERR_FORMAT, "the requests of part %llu: sums out of range",
                            (unsigned long long)from);
    lp_drd_copy(&g, p->lat + lo, rows * sizeof *p->lat);
    lp_drd_copy(&g, p->cp + lo, rows * sizeof *p->cp);
    lp_drd_copy(&g, p->nonempty + lo, rows * sizeof *p->nonempty);
    size_t cells = (size_t)rows * C, at = (size_t)lo * C;
    lp_drd_copy(&g, p->ccp + at, cells * sizeof *p->ccp);
    lp_drd_copy(&g, p->ctot + at, cells * sizeof *p->ctot);
    lp_drd_copy(&g, p->cslack + at, cells * sizeof *p->cslack);
    return g.bad || g.off != n ? lp_error_set(err, LP_ERR_FORMAT, "the requests of part %llu: %zu bytes, %zu read",
                                              (unsigned long long)from, n, g.off)
                               : LP_OK;
}
