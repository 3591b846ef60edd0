/* report_svg.c: what the report's sections draw with (report_int.h): byte buffers with
 * varints for the timeline's blocks, the colours, and inline-SVG charts written by C
 * (stacked bars, distribution functions), legends, share bars and folded tables.
 *
 * Charts scale with the page (viewBox, width 100%) and explain themselves without
 * script: every bar group carries a <title> (the browser's tooltip) listing its values.
 * Every name in a chart is untrusted and goes through lp_html_text.
 */
#include "report_int.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <string.h>

/* ---- bytes ------------------------------------------------------------------------- */

void rp_buf_release(rp_buf *b)
{
    lp_free(b->p);
    memset(b, 0, sizeof *b);
}

void rp_buf_put(rp_buf *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap = cap / 2 * 3 + 64;
        unsigned char *q = lp_realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

void rp_buf_byte(rp_buf *b, unsigned v)
{
    if (b->n < b->cap && !b->failed) {
        b->p[b->n++] = (unsigned char)v;
        return;
    }
    unsigned char c = (unsigned char)v;
    rp_buf_put(b, &c, 1);
}

void rp_buf_uv(rp_buf *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t k = 0;
    do {
        unsigned char c = v & 0x7F;
        v >>= 7;
        tmp[k++] = (unsigned char)(c | (v ? 0x80 : 0));
    } while (v);
    if (b->n + k <= b->cap && !b->failed) {
        memcpy(b->p + b->n, tmp, k);
        b->n += k;
        return;
    }
    rp_buf_put(b, tmp, k);
}

/* ---- colours ---------------------------------------------------------------------- */

static const char *const builtin_colors[LP_TYPE_NBUILTIN] = {
    "#4e79a7", /* processing */
    "#f28e2b", /* scheduling */
    "#b07aa1", /* barrier */
    "#76b7b2", /* buffer */
    "#edc948", /* serialization */
    "#59a14f", /* deserialization */
    "#e4e4e4", /* waiting */
    "#9c755f", /* io */
    "#bab0ac", /* unknown */
};

static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f",
    "#a0cbe8", "#ffbe7d", "#8cd17d", "#d4a6c8", "#b6992d", "#499894", "#86bcb6", "#d37295",
    "#79706e", "#f1ce63", "#fabfd2", "#4b6a8f",
};

const char *rp_type_color(uint32_t type)
{
    if (type < LP_TYPE_NBUILTIN)
        return builtin_colors[type];
    return palette[(type - LP_TYPE_NBUILTIN) % (sizeof palette / sizeof palette[0])];
}

const char *rp_color(size_t k) { return palette[k % (sizeof palette / sizeof palette[0])]; }

/* ---- numbers ---------------------------------------------------------------------- */

void rp_val(lp_html *h, double v, rp_unit u)
{
    if (u == RP_SHARE)
        lp_html_pct(h, v);
    else if (u == RP_NS)
        lp_html_dur(h, (int64_t)llround(v));
    else if (!isfinite(v))
        lp_html_raw(h, "-");
    else
        lp_html_printf(h, "%.3g", v);
}

/* A "nice" step (1, 2 or 5 x 10^k) giving about `ticks` ticks up to max. */
static double nice_step(double max, int ticks)
{
    if (!(max > 0))
        return 1;
    double raw = max / ticks, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void axis_label(lp_html *h, double v, rp_unit u)
{
    if (u == RP_SHARE)
        lp_html_printf(h, "%g%%", v * 100);
    else
        rp_val(h, v, u);
}

void rp_share_bar(lp_html *h, double share, const char *color)
{
    if (!(share > 0))
        share = 0;
    if (share > 1)
        share = 1;
    lp_html_printf(h, "<span class=\"lp-bar\"><span style=\"width:%.2f%%;background:%s\"></span></span>", share * 100,
                   color);
}

void rp_legend(lp_html *h, size_t n, const char *const *names, const char *const *colors)
{
    lp_html_raw(h, "<ul class=\"lp-legend\">");
    for (size_t i = 0; i < n; i++) {
        lp_html_printf(h, "<li><span class=\"lp-sw\" style=\"background:%s\"></span>", colors[i]);
        lp_html_text(h, names[i]);
        lp_html_raw(h, "</li>");
    }
    lp_html_raw(h, "</ul>\n");
}

void rp_fold_open(lp_html *h, size_t rest, const char *thead)
{
    lp_html_printf(h, "</tbody></table>\n<details class=\"lp-more\"><summary>%zu more row%s</summary>\n"
                      "<table class=\"lp-tab\">",
                   rest, rest == 1 ? "" : "s");
    lp_html_raw(h, thead);
    lp_html_raw(h, "<tbody>\n");
}

void rp_fold_close(lp_html *h, int folded)
{
    lp_html_raw(h, "</tbody></table>\n");
    if (folded)
        lp_html_raw(h, "</details>\n");
}

/* ---- stacked bars ----------------------------------------------------------------- */

void rp_svg_stack(lp_html *h, const rp_stack *c)
{
    int W = c->width ? c->width : 640, H = c->height ? c->height : 240;
    double ymax = c->ymax;
    if (!(ymax > 0)) {
        for (uint32_t b = 0; b < c->nbars; b++) {
            double s = 0;
            for (uint32_t k = 0; k < c->nseries; k++)
                s += c->v[(size_t)b * c->nseries + k] > 0 ? c->v[(size_t)b * c->nseries + k] : 0;
            ymax = s > ymax ? s : ymax;
        }
        if (!(ymax > 0))
            ymax = 1;
    }
    lp_html_raw(h, c->horizontal ? "<figure class=\"lp-fig lp-narrow\">" : "<figure class=\"lp-fig\">");
    if (c->caption) {
        lp_html_raw(h, "<figcaption>");
        lp_html_text(h, c->caption);
        lp_html_raw(h, "</figcaption>");
    }
    int hz = c->horizontal;
    double L = hz ? 210 : 52, R = 12, T = 8, B = hz ? 28 : 34;
    if (hz && !c->width)
        W = 760;
    if (hz)
        H = (int)(T + B + 34 * (c->nbars ? c->nbars : 1));
    lp_html_printf(h, "<svg class=\"lp-chart\" viewBox=\"0 0 %d %d\" role=\"img\">", W, H);
    double pw = W - L - R, ph = H - T - B;
    double step = nice_step(ymax, 4);
    /* value axis */
    for (double y = 0; y <= ymax * 1.0001; y += step) {
        if (hz) {
            double x = L + pw * y / ymax;
            lp_html_printf(h, "<line class=\"lp-grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, T, x, T + ph);
            lp_html_printf(h, "<text class=\"lp-ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, T + ph + 16);
        } else {
            double yy = T + ph - ph * y / ymax;
            lp_html_printf(h, "<line class=\"lp-grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", L, yy, L + pw, yy);
            lp_html_printf(h, "<text class=\"lp-ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 4, yy + 4);
        }
        axis_label(h, y, c->unit);
        lp_html_raw(h, "</text>");
    }
    uint32_t n = c->nbars ? c->nbars : 1;
    double slot = (hz ? ph : pw) / n, bw = slot * (n > 40 ? 0.92 : 0.8);
    double lab_px = c->unit == RP_NUM ? 30 : 50; /* room one x label needs */
    uint32_t fit = (uint32_t)(pw / lab_px) > 0 ? (uint32_t)(pw / lab_px) : 1;
    uint32_t every = n > fit ? (n + fit - 1) / fit : 1;
    for (uint32_t b = 0; b < c->nbars; b++) {
        const double *v = &c->v[(size_t)b * c->nseries];
        double tot = 0;
        for (uint32_t k = 0; k < c->nseries; k++)
            tot += v[k] > 0 ? v[k] : 0;
        lp_html_raw(h, "<g><title>");
        if (c->bar_tip)
            lp_html_text(h, c->bar_tip[b]);
        else if (c->bar_label)
            lp_html_text(h, c->bar_label[b]);
        if (!(tot > 0) && c->empty_note) {
            lp_html_raw(h, ": ");
            lp_html_text(h, c->empty_note);
        }
        for (uint32_t k = 0; k < c->nseries; k++) {
            if (!(v[k] > 0))
                continue;
            lp_html_raw(h, "\n");
            lp_html_text(h, c->series[k]);
            lp_html_raw(h, ": ");
            rp_val(h, v[k], c->unit);
        }
        lp_html_raw(h, "</title>");
        double pos = 0;
        double base = (hz ? T : L) + slot * b + (slot - bw) / 2;
        if (!(tot > 0)) {
            if (hz)
                lp_html_printf(h, "<rect class=\"lp-empty\" x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\"/>", L,
                               base, pw, bw);
            else
                lp_html_printf(h, "<rect class=\"lp-empty\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>", base,
                               T, bw, ph);
        }
        for (uint32_t k = 0; k < c->nseries; k++) {
            if (!(v[k] > 0))
                continue;
            double len = (hz ? pw : ph) * v[k] / ymax;
            if (hz)
                lp_html_printf(h, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>",
                               L + pw * pos / ymax, base, len, bw, c->color[k]);
            else
                lp_html_printf(h, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>", base,
                               T + ph - ph * pos / ymax - len, bw, len, c->color[k]);
            pos += v[k];
        }
        lp_html_raw(h, "</g>");
        if (c->bar_label && (b % every == 0 || hz)) {
            if (hz) {
                lp_html_printf(h, "<text class=\"lp-ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 6,
                               base + bw / 2 + 4);
            } else {
                lp_html_printf(h, "<text class=\"lp-ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", base + bw / 2,
                               T + ph + 14);
            }
            lp_html_text(h, c->bar_label[b]);
            lp_html_raw(h, "</text>");
        }
    }
    lp_html_printf(h, "<line class=\"lp-axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", L, T + ph, L + pw,
                   T + ph);
    lp_html_printf(h, "<line class=\"lp-axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", L, T, L, T + ph);
    lp_html_raw(h, "</svg></figure>\n");
}

/* ---- distribution functions ------------------------------------------------------- */

void rp_svg_cdf(lp_html *h, const rp_cdf *c)
{
    const int W = 640, H = 260;
    const double L = 52, R = 14, T = 10, B = 38, pw = W - L - R, ph = H - T - B;
    double xmax = c->xmax;
    if (!(xmax > 0)) {
        for (uint32_t s = 0; s < c->nseries; s++)
            xmax = c->q[(size_t)s * 101 + 100] > xmax ? c->q[(size_t)s * 101 + 100] : xmax;
        if (!(xmax > 0))
            xmax = 1;
    }
    lp_html_raw(h, "<figure class=\"lp-fig lp-narrow\">");
    if (c->caption) {
        lp_html_raw(h, "<figcaption>");
        lp_html_text(h, c->caption);
        lp_html_raw(h, "</figcaption>");
    }
    lp_html_printf(h, "<svg class=\"lp-chart\" viewBox=\"0 0 %d %d\" role=\"img\">", W, H);
    for (int p = 0; p <= 100; p += 25) {
        double y = T + ph - ph * p / 100.0;
        lp_html_printf(h, "<line class=\"lp-grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                          "<text class=\"lp-ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>",
                       L, y, L + pw, y, L - 4, y + 4, p);
    }
    double step = nice_step(xmax, 5);
    for (double x = 0; x <= xmax * 1.0001; x += step) {
        double xx = L + pw * x / xmax;
        lp_html_printf(h, "<line class=\"lp-grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                          "<text class=\"lp-ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                       xx, T, xx, T + ph, xx, T + ph + 14);
        axis_label(h, x, c->unit);
        lp_html_raw(h, "</text>");
    }
    if (c->xlabel) {
        lp_html_printf(h, "<text class=\"lp-ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", L + pw / 2, (double)H - 4);
        lp_html_text(h, c->xlabel);
        lp_html_raw(h, "</text>");
    }
    for (uint32_t s = 0; s < c->nseries; s++) {
        const double *q = &c->q[(size_t)s * 101];
        lp_html_raw(h, "<g><title>");
        lp_html_text(h, c->series[s]);
        lp_html_raw(h, ": median ");
        rp_val(h, q[50], c->unit);
        lp_html_raw(h, ", 90th percentile ");
        rp_val(h, q[90], c->unit);
        lp_html_raw(h, ", max ");
        rp_val(h, q[100], c->unit);
        lp_html_printf(h, "</title><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c->color[s]);
        for (int p = 0; p <= 100; p++) {
            double x = q[p];
            if (!isfinite(x))
                continue;
            if (x > xmax)
                x = xmax;
            if (x < 0)
                x = 0;
            lp_html_printf(h, "%.1f,%.1f ", L + pw * x / xmax, T + ph - ph * p / 100.0);
        }
        lp_html_raw(h, "\"/></g>");
    }
    lp_html_printf(h, "<line class=\"lp-axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", L, T + ph, L + pw,
                   T + ph);
    lp_html_printf(h, "<line class=\"lp-axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", L, T, L, T + ph);
    lp_html_raw(h, "</svg></figure>\n");
}
