/* summary.h: what `summary` and `stream` (and `stream --serve`) share: SnailTrail's
 * summaries of a window printed as text, a compact line or a JSON line (sumprint.c),
 * the totals over windows (sumtotal.c), and the summaries' options (sumopts.c). */
#ifndef LP_CLI_SUMMARY_H
#define LP_CLI_SUMMARY_H

#include "cli.h"
#include "longpole/analysis/snailtrail/window.h"

/* How windows and totals are printed. */
typedef struct cli_sumfmt {
    int json, compact, timing;
    size_t top;            /* rows per summary in text (0 = all) */
    size_t top_json;       /* rows per summary in JSON (0 = all) */
    int64_t base;          /* text times are printed relative to this instant */
    uint64_t seed;         /* reported in JSON */
} cli_sumfmt;

/* One window's result as a text block, a compact line or a JSON line. */
void cli_winres_print(FILE *f, const lp_winres *r, const cli_sumfmt *fmt);
/* A time or duration in the largest unit it reaches, exactly ("2.25s", "-1.5us"); a
 * share as a percentage ("12.5%", "<0.1%", "0"). */
const char *cli_fmt_s(int64_t ns, char *buf, size_t n);
const char *cli_fmt_pct(double x, char *buf, size_t n);
/* s elided in the middle to at most width bytes (buf: width + 1 at least). */
const char *cli_fmt_elide(const char *s, int width, char *buf, size_t n);

/* The totals over windows: add each window's result as it comes, print at the end. */
typedef struct cli_sumtotal cli_sumtotal;
cli_sumtotal *cli_sumtotal_new(void);
void cli_sumtotal_add(cli_sumtotal *st, const lp_winres *r);
void cli_sumtotal_print(FILE *f, cli_sumtotal *st, const cli_sumfmt *fmt);
void cli_sumtotal_free(cli_sumtotal *st);
/* Windows whose CP does not sum to 1 within 1e-9 (*worst: the largest error). */
uint64_t cli_sumtotal_failed(const cli_sumtotal *st, double *worst);
/* Whether memory ran out while adding (the totals are then incomplete). */
int cli_sumtotal_oom(const cli_sumtotal *st);

/* --by LIST into (1u << lp_sumkind) bits; -1 if a name is unknown. */
int cli_parse_kinds(const char *s, unsigned *kinds);

/* The summaries' options of `summary` and `stream`: --by, --top, --seed, --no-path,
 * --no-checks, --timing (table cli_sum_opts, on a cli_sumopts). */
typedef struct cli_sumopts {
    lp_winopts win;        /* --by, --seed, --no-path, --no-checks */
    cli_sumfmt fmt;        /* --top, --timing (and the seed, copied by cli_sumopts_apply) */
    int top_given;
} cli_sumopts;
extern const cli_opt cli_sum_opts[];
/* Defaults: every summary, seed 1, 5 rows. */
void cli_sumopts_init(cli_sumopts *o);
/* After parsing: the seed reported, JSON rows (all unless --top). */
void cli_sumopts_apply(cli_sumopts *o);

/* `summary` over the ranks of a communicator (`longpole dist summary`,
 * cmd_dist_summary.c; docs/distributed.md): a NULL shard = one process. Every rank
 * loads the trace and plans the whole grid, analyses the windows it owns (k mod size),
 * packs their results; rank 0 gathers them and hands them to the printer in index
 * order, so it prints what `summary` prints. */
struct dshard;
int cli_summary_main(int argc, char **argv, struct dshard *sh);
/* Whether this rank analyses window k. */
int cli_sumdist_mine(const struct dshard *s, uint64_t k);
/* Keep a result of this rank's (packed, sent at the end); -1 out of memory. */
int cli_sumdist_keep(struct dshard *s, const lp_winres *r);
/* Every rank, after loading: whether all ranks loaded the same trace (dshard_same). */
int cli_sumdist_same(struct dshard *s, const lp_trace *t);
/* Every rank, after its windows (st: how they went here): agree on failure, gather the
 * results at rank 0, which calls fn on each of the grid's n windows in index order. */
lp_status cli_sumdist_merge(struct dshard *s, lp_status st, uint64_t n, const lp_sumkeys *keys,
                            const lp_snapsrc *src, lp_winres_fn fn, void *ctx, lp_error *err);

#endif
