/* sqlite_export_req.c: the tables of request logs (lp_sqlite_reqlog; Mystery Machine,
 * OSDI'14): hosts and their clock offsets (§3, skew.h), requests, their attributes and
 * logged events, the causal model's segments, relationships and pipelines (§4.1,
 * causal.h), categories and the aggregates of lp_reqstats_run (§4.3-4.4, §5:
 * quantiles, what-if buckets, outliers, slack histograms), and every request's
 * segments with their slack and critical path (§4.2-4.3, reqpath.h), computed as
 * `longpole requests` computes them.
 *
 * Rows are written in key order; per-request paths are computed one request at a time
 * into one reused lp_reqpath, so memory stays that of the log, the model and the
 * aggregates.
 */
#include "export/sqlite_export_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/mystery/reqpath.h"

#include <math.h>
#include <string.h>

#define TICK 16384

static const char *rel_name(lp_rel r)
{
    return r == LP_REL_EXCLUSIVE ? "exclusive" : "before";
}

static lp_status hosts(lp_sqlite *db, const lp_reqlog *rl, const lp_skew *sk, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO hosts VALUES(?,?,?,?,?,?,?,?)", err);
    int have = sk && sk->offset && sk->nhosts == rl->nhosts;
    for (uint32_t h = 0; h < rl->nhosts && !st; h++) {
        sq_row(&x);
        sq_i64(&x, h);
        sq_txt(&x, lp_reqlog_str(rl, rl->host_name[h]));
        if (have) {
            sq_i64(&x, sk->offset[h]);
            sq_i64(&x, sk->bound[h]);
            sq_opt32(&x, sk->parent[h] >= LP_SKEW_NONE ? UINT32_MAX : sk->parent[h]);
            sq_opt32(&x, sk->parent[h] == LP_SKEW_NONE ? UINT32_MAX : sk->root[h]);
            sq_u64(&x, sk->rpcs[h]);
        } else {
            sq_null(&x), sq_null(&x), sq_null(&x), sq_null(&x), sq_null(&x);
        }
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    if (st || !have)
        return st;
    if ((st = sq_prep(db, &x, "INSERT INTO skew_pairs VALUES(?,?,?,?,?,?)", err)))
        return st;
    for (uint32_t i = 0; i < sk->npairs && !st; i++) {
        sq_row(&x);
        sq_i64(&x, sk->pairs[i].a);
        sq_i64(&x, sk->pairs[i].b);
        sq_i64(&x, sk->pairs[i].theta);
        sq_i64(&x, sk->pairs[i].rtt);
        sq_u64(&x, sk->pairs[i].n);
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    return st;
}

static lp_status names(lp_sqlite *db, const char *sql, const lp_reqlog *rl, const lp_str *ids, uint32_t n,
                       lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, sql, err);
    for (uint32_t i = 0; i < n && !st; i++) {
        sq_row(&x);
        sq_i64(&x, i);
        sq_txt(&x, lp_reqlog_str(rl, ids[i]));
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    return st;
}

/* One request's row: its extent and path figures (NULL for an excluded request; only
 * the extent without paths), its path computed into p. */
static lp_status req_row(sq_ins *x, const lp_reqlog *rl, const lp_causal *m, const uint32_t *map,
                         const lp_sqlite_opts *o, uint64_t r, lp_reqpath *p, lp_error *err)
{
    lp_status st;
    sq_row(x);
    sq_u64(x, r);
    sq_txt(x, lp_reqlog_str(rl, rl->req_name[r]));
    sq_i64(x, rl->rbad[r] != 0);
    if (rl->rbad[r]) {
        for (int k = 0; k < 7; k++)
            sq_null(x);
    } else if (o->no_request_paths) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (uint64_t i = rl->rfirst[r]; i < rl->rfirst[r + 1]; i++) {
            lo = rl->rows[i].time < lo ? rl->rows[i].time : lo;
            hi = rl->rows[i].time > hi ? rl->rows[i].time : hi;
        }
        if (lo <= hi) {
            sq_i64(x, lo);
            sq_i64(x, hi - lo);
        } else {
            sq_null(x), sq_null(x);
        }
        for (int k = 0; k < 5; k++)
            sq_null(x);
    } else {
        if ((st = lp_reqpath_compute(p, m, rl, map, r, err)))
            return st;
        sq_i64(x, p->first);
        sq_i64(x, p->latency);
        sq_i64(x, p->cp);
        sq_u64(x, p->n);
        sq_u64(x, p->edges);
        sq_u64(x, p->violations);
        sq_u64(x, p->unknown);
    }
    return sq_step(x, err);
}

/* The segments of request r's path p, with their place on the critical path
 * (pathpos: scratch, grown to p->n). */
static lp_status req_segments(sq_ins *y, uint64_t r, const lp_reqpath *p, uint32_t **pathpos, size_t *cappos,
                              lp_error *err)
{
    lp_status st = LP_OK;
    if (p->n > *cappos) {
        lp_free(*pathpos);
        *cappos = p->n;
        if (!(*pathpos = lp_malloc(*cappos * sizeof **pathpos)))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    uint32_t *pos = *pathpos;
    for (uint32_t i = 0; i < p->n; i++)
        pos[i] = UINT32_MAX;
    for (uint32_t k = 0; k < p->npath; k++)
        pos[p->path[k]] = k;
    for (uint32_t i = 0; i < p->n && !st; i++) {
        sq_row(y);
        sq_u64(y, r);
        sq_i64(y, i);
        sq_opt32(y, p->seg[i]);
        sq_i64(y, p->task[i]);
        sq_i64(y, p->start[i]);
        sq_i64(y, p->end[i]);
        sq_i64(y, p->slack[i]);
        sq_i64(y, p->cpstart[i]);
        sq_i64(y, p->cpend[i]);
        sq_i64(y, p->oncp[i] != 0);
        sq_opt32(y, pos[i]);
        st = sq_step(y, err);
    }
    return st;
}

/* The request attributes, by request then name (the key order). */
static lp_status req_attrs(lp_sqlite *db, const lp_reqlog *rl, lp_error *err)
{
    sq_ins z;
    if (!rl->nattrs)
        return LP_OK;
    lp_status st = sq_prep(db, &z, "INSERT OR REPLACE INTO request_attrs VALUES(?,?,?,?)", err);
    if (st)
        return st;
    for (uint64_t r = 0; r < rl->nreqs && !st; r++)
        for (uint32_t a = 0; a < rl->nattrs && !st; a++) {
            lp_str v = rl->rattr[(size_t)a * rl->nreqs + r];
            if (v == LP_STR_NONE)
                continue;
            sq_row(&z);
            sq_u64(&z, r);
            sq_txt(&z, lp_reqlog_str(rl, rl->attr_name[a]));
            sq_txt(&z, lp_reqlog_str(rl, v));
            st = sq_step(&z, err);
        }
    return sq_end(&z, st, err);
}

/* requests, request_segments (with the per-request critical path), request_attrs */
static lp_status requests(lp_sqlite *db, const lp_reqlog *rl, const lp_causal *m, const uint32_t *map,
                          const lp_sqlite_opts *o, lp_error *err)
{
    sq_ins x, y;
    lp_status st = sq_prep(db, &x, "INSERT INTO requests VALUES(?,?,?,?,?,?,?,?,?,?,?)", err);
    if (st)
        return st;
    if ((st = sq_prep(db, &y, "INSERT INTO request_segments VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", err))) {
        st = sq_end(&x, st, err);
        return st;
    }
    lp_reqpath p;
    lp_reqpath_init(&p);
    uint32_t *pathpos = NULL;
    size_t cappos = 0;
    for (uint64_t r = 0; r < rl->nreqs && !st; r++) {
        if ((st = req_row(&x, rl, m, map, o, r, &p, err)))
            break;
        if (rl->rbad[r] || o->no_request_paths)
            continue;
        st = req_segments(&y, r, &p, &pathpos, &cappos, err);
        if (!st && (r + 1) % TICK == 0 && sq_progress(db, "requests", r + 1, rl->nreqs))
            st = lp_error_set(err, LP_ERR_ARG, "cancelled");
    }
    lp_free(pathpos);
    lp_reqpath_release(&p);
    st = sq_end(&x, st, err);
    st = sq_end(&y, st, err);
    if (st)
        return st;
    return req_attrs(db, rl, err);
}

static lp_status events(lp_sqlite *db, const lp_reqlog *rl, const uint32_t *map, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO log_events VALUES(?,?,?,?,?,?,?,?)", err);
    for (uint64_t r = 0; r < rl->nreqs && !st; r++)
        for (uint64_t i = rl->rfirst[r]; i < rl->rfirst[r + 1] && !st; i++) {
            const lp_reqrow *w = &rl->rows[i];
            sq_row(&x);
            sq_u64(&x, r);
            sq_u64(&x, i - rl->rfirst[r]);
            sq_i64(&x, w->host);
            sq_i64(&x, rl->pt_task[w->point]);
            sq_i64(&x, rl->pt_event[w->point]);
            sq_i64(&x, w->time);
            sq_opt32(&x, w->seg == LP_REQLOG_NONE ? UINT32_MAX : map[w->seg]);
            st = sq_step(&x, err);
            if (!st && (i + 1) % TICK == 0 && sq_progress(db, "events", i + 1, rl->nrows))
                st = lp_error_set(err, LP_ERR_ARG, "cancelled");
        }
    st = sq_end(&x, st, err);
    return st;
}

/* The model's segments, with the aggregates. */
static lp_status model_segments(lp_sqlite *db, const lp_causal *m, const lp_reqcat *cat, const lp_reqstats *S,
                                lp_error *err)
{
    sq_ins x;
    char lab[1024];
    double n = (double)(S->analysed ? S->analysed : 1);
    lp_status st = sq_prep(db, &x, "INSERT INTO segments VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    for (uint32_t s = 0; s < m->nseg && !st; s++) {
        const lp_reqstats_seg *g = s < S->nseg ? &S->seg[s] : NULL;
        sq_row(&x);
        sq_i64(&x, s);
        sq_txt(&x, lp_strtab_get(&m->names, m->seg_task[s]));
        sq_txt(&x, lp_strtab_get(&m->names, m->seg_from[s]));
        sq_txt(&x, lp_strtab_get(&m->names, m->seg_to[s]));
        sq_txt_copy(&x, lp_causal_label(m, s, lab, sizeof lab));
        sq_txt(&x, cat->of_seg && s < cat->nseg ? cat->name[cat->of_seg[s]] : NULL);
        sq_i64(&x, m->seg_cross[s] != 0);
        sq_i64(&x, m->seg_dropped[s] != 0);
        sq_u64(&x, m->seg_count[s]);
        if (g) {
            sq_u64(&x, g->present);
            sq_u64(&x, g->oncp);
            sq_i64(&x, g->cp_sum);
            sq_i64(&x, g->dur_sum);
            sq_i64(&x, g->slack_sum);
            sq_dbl(&x, (double)g->cp_sum / n);
            sq_dbl(&x, (double)g->dur_sum / n);
            sq_dbl(&x, g->present ? (double)g->slack_sum / (double)g->present : NAN);
            sq_dbl(&x, lp_reqstats_overrep(S, s));
            sq_u64(&x, g->present_out);
            sq_u64(&x, g->oncp_out);
            sq_i64(&x, g->cp_out);
            sq_i64(&x, g->dur_out);
        } else {
            for (int k = 0; k < 13; k++)
                sq_null(&x);
        }
        st = sq_step(&x, err);
    }
    return sq_end(&x, st, err);
}

/* The slack histograms of the segments. */
static lp_status model_slack(lp_sqlite *db, const lp_reqstats *S, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO slack_histogram VALUES(?,?,?,?,?,?)", err);
    if (st)
        return st;
    for (uint32_t s = 0; s < S->nseg && !st; s++)
        for (int h = 0; h < LP_REQSTATS_HIST && !st; h++) {
            if (!S->seg[s].slack_hist[h])
                continue;
            sq_row(&x);
            sq_i64(&x, s);
            sq_i64(&x, h);
            if (h == 0) {
                sq_i64(&x, 0);
                sq_i64(&x, 0);
            } else {
                sq_i64(&x, h - 1 >= 63 ? INT64_MAX : (int64_t)1 << (h - 1));
                sq_i64(&x, h >= 63 ? INT64_MAX : ((int64_t)1 << h) - 1);
            }
            sq_u64(&x, S->seg[s].slack_hist[h]);
            st = sq_step(&x, err);
        }
    return sq_end(&x, st, err);
}

/* The relationships of the pairs seen together: (a, b, 'before') for a -> b, and (a, b,
 * 'exclusive') once per pair (a < b); `direct` marks the transitive reduction. */
static lp_status model_relationships(lp_sqlite *db, const lp_causal *m, lp_error *err)
{
    sq_ins x;
    uint64_t *direct = NULL;
    lp_status st = lp_causal_direct(m, &direct, err);
    if (st)
        return st;
    if (!(st = sq_prep(db, &x, "INSERT INTO relationships VALUES(?,?,?,?,?)", err))) {
        for (uint32_t a = 0; a < m->nseg && !st; a++) {
            const uint64_t *row = m->seen + (size_t)a * m->words;
            for (uint32_t w = 0; w < m->words && !st; w++)
                for (uint64_t bits = row[w]; bits && !st; bits &= bits - 1) {
                    uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);
                    if (b >= m->nseg || b == a)
                        continue;
                    lp_rel rel = lp_causal_rel(m, a, b);
                    if (rel != LP_REL_BEFORE && !(rel == LP_REL_EXCLUSIVE && a < b))
                        continue;
                    sq_row(&x);
                    sq_i64(&x, a);
                    sq_i64(&x, b);
                    sq_txt(&x, rel_name(rel));
                    sq_i64(&x, rel == LP_REL_BEFORE ? lp_causal_bit(direct, m->words, a, b) : 0);
                    st = sq_step(&x, err);
                }
        }
        st = sq_end(&x, st, err);
    }
    lp_free(direct);
    return st;
}

/* The pipelines, then the rejected ones. */
static lp_status model_pipelines(lp_sqlite *db, const lp_causal *m, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO pipelines VALUES(?,?,?,?,?,?,?,?)", err);
    if (st)
        return st;
    for (uint32_t i = 0; i < m->npipes && !st; i++) {
        const lp_causal_pipe *pp = &m->pipes[i];
        for (uint32_t k = 0; k < pp->npairs && !st; k++) {
            sq_row(&x);
            sq_i64(&x, i);
            sq_i64(&x, k);
            sq_txt(&x, lp_strtab_get(&m->names, pp->t1));
            sq_txt(&x, lp_strtab_get(&m->names, pp->t2));
            sq_i64(&x, pp->a[k]);
            sq_i64(&x, pp->b[k]);
            sq_i64(&x, 0);
            st = sq_step(&x, err);
        }
    }
    for (uint32_t i = 0; i < m->npipe_rej && !st; i++) {
        sq_row(&x);
        sq_i64(&x, (int64_t)m->npipes + i);
        sq_i64(&x, 0);
        sq_txt(&x, lp_strtab_get(&m->names, m->pipe_rej[2 * i]));
        sq_txt(&x, lp_strtab_get(&m->names, m->pipe_rej[2 * i + 1]));
        sq_null(&x), sq_null(&x);
        sq_i64(&x, 1);
        st = sq_step(&x, err);
    }
    return sq_end(&x, st, err);
}

/* The model: segments (with the aggregates), slack histograms, relationships, pipelines. */
static lp_status model(lp_sqlite *db, const lp_causal *m, const lp_reqcat *cat, const lp_reqstats *S, lp_error *err)
{
    lp_status st;
    if ((st = model_segments(db, m, cat, S, err)) || (st = model_slack(db, S, err)) ||
        (st = model_relationships(db, m, err)))
        return st;
    return model_pipelines(db, m, err);
}

static lp_status aggregates(lp_sqlite *db, const lp_reqlog *rl, const lp_skew *sk, const lp_causal *m,
                            const lp_reqcat *cat, const lp_reqstats *S, const char *model_file, double share,
                            lp_error *err)
{
    sq_ins x;
    double n = (double)(S->analysed ? S->analysed : 1);
    int64_t cp_total = 0, dur_total = 0;
    for (uint32_t c = 0; c < S->ncat; c++)
        cp_total += S->cat[c].cp_sum, dur_total += S->cat[c].dur_sum;
    lp_status st = sq_prep(db, &x, "INSERT INTO req_info VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (st)
        return st;
    sq_row(&x);
    sq_u64(&x, rl->nreqs);
    sq_u64(&x, S->analysed);
    sq_u64(&x, S->excluded);
    sq_u64(&x, rl->nlines);
    sq_u64(&x, rl->nbadlines);
    sq_i64(&x, sk != NULL);
    sq_txt(&x, model_file);
    sq_u64(&x, m->nseg);
    sq_u64(&x, m->nreq);
    sq_u64(&x, S->violations);
    sq_u64(&x, S->unknown);
    sq_dbl(&x, S->latency_mean);
    sq_dbl(&x, S->cp_mean);
    sq_dbl(&x, share);
    sq_u64(&x, S->noutliers);
    sq_i64(&x, S->outlier_latency);
    st = sq_step(&x, err);
    st = sq_end(&x, st, err);
    if (st || (st = sq_prep(db, &x, "INSERT INTO request_quantiles VALUES(?,?,?,?)", err)))
        return st;
    for (int q = 0; q < LP_REQSTATS_Q && !st; q++) {
        sq_row(&x);
        sq_i64(&x, q);
        sq_dbl(&x, S->latency_q[q]);
        sq_dbl(&x, S->cp_q[q]);
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    if (st || (st = sq_prep(db, &x, "INSERT INTO categories VALUES(?,?,?,?,?,?,?,?,?,?)", err)))
        return st;
    for (uint32_t c = 0; c < S->ncat && !st; c++) {
        const lp_reqstats_cat *pc = &S->cat[c];
        sq_row(&x);
        sq_i64(&x, c);
        sq_txt(&x, cat->name[c]);
        sq_u64(&x, pc->present);
        sq_i64(&x, pc->cp_sum);
        sq_i64(&x, pc->dur_sum);
        sq_dbl(&x, (double)pc->cp_sum / n);
        sq_dbl(&x, (double)pc->dur_sum / n);
        sq_dbl(&x, cp_total ? (double)pc->cp_sum / (double)cp_total : NAN);
        sq_dbl(&x, dur_total ? (double)pc->dur_sum / (double)dur_total : NAN);
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    if (st || (st = sq_prep(db, &x, "INSERT INTO category_quantiles VALUES(?,?,?,?,?)", err)))
        return st;
    for (uint32_t c = 0; c < S->ncat && !st; c++)
        for (int q = 0; q < LP_REQSTATS_Q && !st; q++) {
            sq_row(&x);
            sq_i64(&x, c);
            sq_i64(&x, q);
            sq_dbl(&x, S->cat[c].share_q[q]);
            sq_dbl(&x, S->cat[c].slack_q[q]);
            st = sq_step(&x, err);
        }
    st = sq_end(&x, st, err);
    if (st || (st = sq_prep(db, &x, "INSERT INTO whatif VALUES(?,?,?,?,?,?,?,?,?)", err)))
        return st;
    for (uint32_t c = 0; c < S->ncat && !st; c++)
        for (uint32_t b = 0; b < S->cat[c].nbuckets && !st; b++) {
            const lp_reqstats_bucket *bk = &S->cat[c].buckets[b];
            sq_row(&x);
            sq_i64(&x, c);
            sq_i64(&x, b);
            sq_i64(&x, bk->slack_lo);
            sq_i64(&x, bk->slack_hi);
            sq_u64(&x, bk->n);
            sq_dbl(&x, bk->r);
            sq_dbl(&x, bk->x_mean);
            sq_dbl(&x, bk->latency_mean);
            st = sq_step(&x, err);
        }
    st = sq_end(&x, st, err);
    return st;
}

lp_status lp_sqlite_reqlog(lp_sqlite *db, const lp_reqlog *rl, const lp_skew *sk, const lp_causal *m,
                           const uint32_t *map, const lp_reqcat *cat, const char *model_file,
                           const lp_sqlite_opts *o, lp_error *err)
{
    lp_sqlite_opts dflt;
    if (!o) {
        lp_sqlite_opts_init(&dflt);
        o = &dflt;
    }
    db->progress = o->progress;
    db->progress_ctx = o->progress_ctx;
    double share = o->outlier_share > 0 && o->outlier_share < 1 ? o->outlier_share : 0.05;
    lp_reqstats_opts so;
    memset(&so, 0, sizeof so);
    so.threads = o->threads;
    so.outlier_share = share;
    so.buckets = o->buckets ? o->buckets : 20;
    so.progress = o->progress;
    so.progress_ctx = o->progress_ctx;
    lp_reqstats S;
    memset(&S, 0, sizeof S);
    lp_status st = lp_reqstats_run(m, rl, map, cat, &so, &S, err);
    if (!st)
        st = hosts(db, rl, sk, err);
    if (!st)
        st = names(db, "INSERT INTO tasks VALUES(?,?,?)", rl, rl->task_name, rl->ntasks, err);
    if (!st)
        st = names(db, "INSERT INTO event_names VALUES(?,?,?)", rl, rl->event_name, rl->nevents, err);
    if (!st)
        st = model(db, m, cat, &S, err);
    if (!st)
        st = aggregates(db, rl, sk, m, cat, &S, model_file, share, err);
    if (!st)
        st = requests(db, rl, m, map, o, err);
    if (!st && !o->no_events)
        st = events(db, rl, map, err);
    lp_reqstats_release(&S);
    return st;
}
