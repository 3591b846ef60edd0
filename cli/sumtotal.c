/* sumtotal.c: the totals over windows of `summary` and `stream` (summary.h): per
 * summary and key, the means of CP, profile and path shares weighted by window span and
 * the windows where the key ranked first; counts of windows, empty ones, CP-sum
 * failures and broken instrumentation properties. Printed as text or a JSON line. */
#include "summary.h"
#include "base/hashmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct tot_row {
    uint64_t key;
    double cp, rank, prof, path; /* sums over windows with paths, weighted by their span */
    uint64_t first;          /* windows where the key ranked first */
} tot_row;

typedef struct tot_map {
    tot_row *rows;           /* in order of first appearance */
    size_t n, cap;
    lp_hmap index;           /* key -> row (the library's hash table) */
} tot_map;

struct cli_sumtotal {
    tot_map map[LP_SUM_NKINDS];
    uint64_t windows, with_paths, sum_bad, p1, p2, events, empty;
    double worst_sum, worst_bound, seconds;
    double wsum;             /* total span of the windows with paths (the weights) */
    const lp_winres *last;   /* for labels: keys of the last window */
    const lp_sumkeys *keys;
    const lp_trace *t;
    unsigned kinds;
    int oom;
};

cli_sumtotal *cli_sumtotal_new(void) { return lp_calloc(1, sizeof(cli_sumtotal)); }

void cli_sumtotal_free(cli_sumtotal *st)
{
    if (!st)
        return;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        lp_free(st->map[k].rows);
        lp_hmap_release(&st->map[k].index);
    }
    lp_free(st);
}

uint64_t cli_sumtotal_failed(const cli_sumtotal *st, double *worst)
{
    *worst = st->worst_sum;
    return st->sum_bad;
}

int cli_sumtotal_oom(const cli_sumtotal *st) { return st->oom; }

static tot_row *tot_get(tot_map *m, uint64_t key)
{
    int added;
    uint64_t i = lp_hmap_get_or_put(&m->index, key, m->n, &added);
    if (i == LP_HMAP_EMPTY)
        return NULL;
    if (added) {
        if (m->n == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 32;
            tot_row *nr = lp_reallocarray(m->rows, cap, sizeof *nr);
            if (!nr) {
                lp_hmap_del(&m->index, key);
                return NULL;
            }
            m->rows = nr;
            m->cap = cap;
        }
        m->rows[m->n++] = (tot_row){key, 0, 0, 0, 0, 0};
    }
    return &m->rows[i];
}

void cli_sumtotal_add(cli_sumtotal *st, const lp_winres *r)
{
    st->windows++;
    st->events += r->nevents;
    st->seconds += r->seconds;
    st->keys = r->keys;
    st->t = r->t;
    st->kinds |= r->kinds;
    if (!r->nv)
        st->empty++;
    if (r->checked) {
        st->p1 += r->check.np1 > 0;
        st->p2 += r->check.np2 > 0;
    }
    if (!r->has_paths)
        return;
    st->with_paths++;
    st->sum_bad += !r->sum_ok;
    double e = fabs(r->cp_sum - 1.0);
    st->worst_sum = e > st->worst_sum ? e : st->worst_sum;
    st->worst_bound = r->err_bound > st->worst_bound ? r->err_bound : st->worst_bound;
    double wt = (double)(r->t1 - r->t0);
    st->wsum += wt;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(r->kinds & (1u << k)))
            continue;
        const lp_summary *s = &r->sum[k];
        for (size_t i = 0; i < s->n; i++) {
            tot_row *t = tot_get(&st->map[k], s->rows[i].key);
            if (!t) {
                st->oom = 1;
                return;
            }
            t->cp += wt * s->rows[i].cp;
            t->rank += wt * s->rows[i].rank;
            t->prof += wt * s->rows[i].prof_share;
            t->path += wt * s->rows[i].path_share;
            t->first += i == 0 && s->rows[i].cp > 0;
        }
    }
}

static int cmp_tot(const void *pa, const void *pb)
{
    const tot_row *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Rows by mean CP per worker (operators) or mean CP; as in the windows, the comm and
 * "-" keys of the worker and operator summaries last. */
static void sort_rows(cli_sumtotal *st)
{
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        tot_map *m = &st->map[k];
        size_t nreal = m->n;
        if (k == LP_SUM_WORKER || k == LP_SUM_OPERATOR) { /* as in the windows: comm and "-" last */
            nreal = 0;
            for (size_t i = 0; i < m->n; i++)
                if (m->rows[i].key < LP_SUMKEY_NONE) {
                    tot_row x = m->rows[nreal];
                    m->rows[nreal++] = m->rows[i];
                    m->rows[i] = x;
                }
        }
        if (nreal > 1)
            qsort(m->rows, nreal, sizeof(tot_row), cmp_tot);
        if (m->n - nreal > 1)
            qsort(m->rows + nreal, m->n - nreal, sizeof(tot_row), cmp_tot);
    }
}

static void print_json(FILE *f, cli_sumtotal *st, const cli_sumfmt *fmt, double nw)
{
    char lab[160];
    lp_jsonw j;
    lp_jsonw_init(&j, f, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "kind", "overall");
    lp_jsonw_ku64(&j, "windows", st->windows);
    lp_jsonw_ku64(&j, "windows_with_paths", st->with_paths);
    lp_jsonw_ku64(&j, "empty_windows", st->empty);
    lp_jsonw_ku64(&j, "cp_sum_failures", st->sum_bad);
    lp_jsonw_kdbl(&j, "worst_cp_sum_error", st->worst_sum);
    lp_jsonw_kdbl(&j, "worst_err_bound", st->worst_bound);
    lp_jsonw_ku64(&j, "property1_windows", st->p1);
    lp_jsonw_ku64(&j, "property2_windows", st->p2);
    lp_jsonw_ku64(&j, "events", st->events);
    if (fmt->timing)
        lp_jsonw_kdbl(&j, "seconds", st->seconds);
    lp_jsonw_key(&j, "summaries");
    lp_jsonw_obj(&j);
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(st->kinds & (1u << k)))
            continue;
        lp_jsonw_key(&j, lp_sumkind_name((lp_sumkind)k));
        lp_jsonw_arr(&j);
        size_t shown = fmt->top_json && fmt->top_json < st->map[k].n ? fmt->top_json : st->map[k].n;
        for (size_t i = 0; i < shown; i++) {
            const tot_row *t = &st->map[k].rows[i];
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "key", lp_sumkeys_label(st->keys, (lp_sumkind)k, t->key, lab, sizeof lab));
            lp_jsonw_kdbl(&j, "mean_cp", t->cp / nw);
            if (k == LP_SUM_OPERATOR)
                lp_jsonw_kdbl(&j, "mean_cp_per_worker", t->rank / nw);
            lp_jsonw_ku64(&j, "ranked_first", t->first);
            lp_jsonw_kdbl(&j, "mean_profile_share", t->prof / nw);
            lp_jsonw_kdbl(&j, "mean_path_share", t->path / nw);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
    }
    lp_jsonw_obj_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static void print_text(FILE *f, cli_sumtotal *st, const cli_sumfmt *fmt, double nw)
{
    char lab[160], p1[24], p2[24], p3[24];
    if (fmt->compact && st->windows <= 1)
        return;
    fprintf(f, "\noverall (means weighted by window span): %llu window%s, %llu with transient paths",
            (unsigned long long)st->windows,
            st->windows == 1 ? "" : "s", (unsigned long long)st->with_paths);
    if (st->with_paths)
        fprintf(f, "; CP sums to 1 within 1e-9 in %s (worst error %.1e, bound %.1e)",
                st->sum_bad ? "NOT ALL" : "all", st->worst_sum, st->worst_bound);
    fprintf(f, "; property 1 broken in %llu, property 2 in %llu", (unsigned long long)st->p1,
            (unsigned long long)st->p2);
    if (fmt->timing)
        fprintf(f, "; %llu events analysed in %.3f s (%.1f M events/s)", (unsigned long long)st->events, st->seconds,
                st->seconds > 0 ? (double)st->events / st->seconds / 1e6 : 0);
    fprintf(f, "\n");
    if (!st->with_paths || st->windows <= 1)
        return;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(st->kinds & (1u << k)))
            continue;
        const tot_map *m = &st->map[k];
        size_t shown = fmt->top && fmt->top < m->n ? fmt->top : m->n;
        int width = 10;
        for (size_t i = 0; i < shown; i++) {
            int l = (int)strlen(lp_sumkeys_label(st->keys, (lp_sumkind)k, m->rows[i].key, lab, sizeof lab));
            width = l > width ? l : width;
        }
        width = width > 48 ? 48 : width;
        if (k == LP_SUM_OPERATOR)
            fprintf(f, "  %-*s %8s %10s %9s %13s %12s\n", width, "operator", "mean CP", "CP/worker", "1st in",
                    "mean profile", "mean 1 path");
        else
            fprintf(f, "  %-*s %8s %9s %13s %12s\n", width, lp_sumkind_name((lp_sumkind)k), "mean CP", "1st in",
                    "mean profile", "mean 1 path");
        for (size_t i = 0; i < shown; i++) {
            const tot_row *t = &m->rows[i];
            char firstb[48];
            snprintf(firstb, sizeof firstb, "%llu/%llu", (unsigned long long)t->first,
                     (unsigned long long)st->with_paths);
            char el[64];
            const char *l =
                cli_fmt_elide(lp_sumkeys_label(st->keys, (lp_sumkind)k, t->key, lab, sizeof lab), width, el, sizeof el);
            if (k == LP_SUM_OPERATOR) {
                char p4[24];
                fprintf(f, "  %-*s %8s %10s %9s %13s %12s\n", width, l, cli_fmt_pct(t->cp / nw, p1, sizeof p1),
                        cli_fmt_pct(t->rank / nw, p4, sizeof p4), firstb, cli_fmt_pct(t->prof / nw, p2, sizeof p2),
                        cli_fmt_pct(t->path / nw, p3, sizeof p3));
            } else {
                fprintf(f, "  %-*s %8s %9s %13s %12s\n", width, l, cli_fmt_pct(t->cp / nw, p1, sizeof p1), firstb,
                        cli_fmt_pct(t->prof / nw, p2, sizeof p2), cli_fmt_pct(t->path / nw, p3, sizeof p3));
            }
        }
        if (shown < m->n)
            fprintf(f, "  ... %zu more\n", m->n - shown);
    }
}

void cli_sumtotal_print(FILE *f, cli_sumtotal *st, const cli_sumfmt *fmt)
{
    sort_rows(st);
    double nw = st->wsum > 0 ? st->wsum : 1; /* means are weighted by window span */
    if (fmt->json)
        print_json(f, st, fmt, nw);
    else
        print_text(f, st, fmt, nw);
}
