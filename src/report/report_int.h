/* report_int.h: what the report's files share and nothing else needs: the sections'
 * descriptors (the registry is in report.c), the CSS and the script, a growable byte
 * buffer for the timeline's binary blocks, colours, and SVG chart writers
 * (report_svg.c). Not part of the public API. */
#ifndef LP_REPORT_INT_H
#define LP_REPORT_INT_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/report/report.h"

/* the sections (one file each) */
extern const lp_report_section lp_report_sec_overview;  /* report_overview.c */
extern const lp_report_section lp_report_sec_timeline;  /* report_timeline.c */
extern const lp_report_section lp_report_sec_breakdown; /* report_breakdown.c */
extern const lp_report_section lp_report_sec_summaries; /* report_summaries.c */
extern const lp_report_section lp_report_sec_requests;  /* report_requests.c */
extern const lp_report_section lp_report_sec_spans;     /* report_spans.c */
extern const lp_report_section lp_report_sec_resources; /* report_resources.c (CrystalPerf) */
extern const lp_report_section lp_report_sec_grade10;   /* report_grade10.c */

/* report_assets.c */
extern const char lp_report_css[];
extern const char lp_report_js[];

/* report.c: <section class="lp-sec" id="lp-s-NAME" data-title="..."><h2>TITLE</h2> */
void rp_section_open(lp_html *h, const lp_report_section *s);
void rp_section_close(lp_html *h);

/* ---- bytes ------------------------------------------------------------------------- */

/* A growable byte buffer; `failed` is sticky (out of memory). */
typedef struct rp_buf {
    unsigned char *p;
    size_t n, cap;
    int failed;
} rp_buf;

void rp_buf_release(rp_buf *b);
void rp_buf_put(rp_buf *b, const void *p, size_t n);
void rp_buf_byte(rp_buf *b, unsigned v);
/* LEB128 unsigned varint; zigzag for signed. */
void rp_buf_uv(rp_buf *b, uint64_t v);
static inline void rp_buf_sv(rp_buf *b, int64_t v)
{
    rp_buf_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* ---- colours ---------------------------------------------------------------------- */

/* "#rrggbb" of an activity type (fixed for the built-ins, a palette for the others). */
const char *rp_type_color(uint32_t type);
/* The k-th colour of the categorical palette (cycles; skips red, kept for the path). */
const char *rp_color(size_t k);
#define RP_OTHER_COLOR "#c7c7c7"
#define RP_COMM_COLOR "#555555"
#define RP_CP_COLOR "#d7191c"

/* ---- SVG charts (report_svg.c) ---------------------------------------------------- */

typedef enum rp_unit { RP_SHARE = 0, RP_NS = 1, RP_NUM = 2 } rp_unit;

/* A stacked bar chart: bar b stacks v[b * nseries + s] for every series s. */
typedef struct rp_stack {
    uint32_t nbars, nseries;
    const double *v;              /* [nbars * nseries] */
    const char *const *bar_label; /* [nbars] x labels (untrusted: escaped) */
    const char *const *bar_tip;   /* [nbars] tooltip headings, NULL: the labels */
    const char *const *series;    /* [nseries] series names (untrusted) */
    const char *const *color;     /* [nseries] "#rrggbb" (trusted) */
    rp_unit unit;                 /* how values read (axis, tooltips) */
    double ymax;                  /* 0: the largest stack */
    int horizontal;               /* bars run left to right (few bars with long labels) */
    const char *caption;          /* untrusted */
    const char *empty_note;       /* tooltip of bars whose stack is 0 (e.g. "no transient path") */
    int width, height;            /* px (0: defaults) */
} rp_stack;
void rp_svg_stack(lp_html *h, const rp_stack *c);

/* Distribution functions: series s has 101 quantiles q[s * 101 + p] (x of y = p %). */
typedef struct rp_cdf {
    uint32_t nseries;
    const double *q;              /* [nseries * 101] */
    const char *const *series;
    const char *const *color;
    rp_unit unit;                 /* x axis */
    double xmax;                  /* 0: the largest q[100]; values beyond are drawn at the edge */
    const char *caption;
    const char *xlabel;
} rp_cdf;
void rp_svg_cdf(lp_html *h, const rp_cdf *c);

/* A legend: coloured swatches with names (escaped). */
void rp_legend(lp_html *h, size_t n, const char *const *names, const char *const *colors);

/* A number in a unit as text: "12.3%", "4.56 ms", "0.731". */
void rp_val(lp_html *h, double v, rp_unit u);
/* An inline bar (a share 0..1) for tables: <span class="lp-bar">. */
void rp_share_bar(lp_html *h, double share, const char *color);

/* Table rows beyond `shown` go into a collapsed <details> with a second table: call
 * rp_fold_open when reaching row `shown` (it closes the first table and opens the
 * second with the same header `thead`, trusted markup), rp_fold_close at the end. */
void rp_fold_open(lp_html *h, size_t rest, const char *thead);
void rp_fold_close(lp_html *h, int folded);

#endif
