/* oplog.c: Grade10 OperationLog lines (docs/formats/grade10-inputs.md), the phase
 * events Grade10's instrumented Giraph and PowerGraph write:
 *
 *   ... org.apache.giraph.metrics.OperationLog: time=1589371843123, event=start, phase=Superstep, superstep=3
 *   OperationLog: time=1589371843123456789, event=end, phase=GatherThread, worker=2, thread=5
 *
 * A record is the text after `OperationLog` and a `:` or `-` (or a whole line that
 * starts with `time=`): comma-separated key=value pairs, both sides trimmed. `time`
 * (integer, or decimal, in the file's unit) and `event` (start, end or single) are
 * required; `phase` names the phase type (absent in records that carry other facts,
 * such as a host name); every other pair is a tag (the phase's instance keys). The
 * time unit is given or decided per file (grade10.h). Every broken record is reported
 * with its line and dropped; lines without a record are counted, not reported.
 */
#include "longpole/import/grade10.h"
#include "import/grade10/g10_text.h"
#include "longpole/base/alloc.h"

#include <string.h>

#define MAXTAGS 64
#define MS_FROM 100000000000LL              /* 10^11: epoch ms from 1973 */
#define MS_BELOW 100000000000000LL          /* 10^14: epoch ms until the year 5138 */
#define NS_FROM 100000000000000000LL        /* 10^17: epoch ns from 1973 */

typedef struct octx {
    lp_g10_data *d;
    lp_diags *ds;
    const char *fname;
    lp_str file;
    int64_t unit;      /* ns per time unit; 0 while undecided (auto) */
    int automatic;
} octx;

/* Find the record text in a line: after "OperationLog" and ':' or '-', or the line
 * itself when it starts with "time=". NULL if the line holds no record. */
static const char *record_text(const char *p, size_t n, size_t *rn)
{
    const char *s = p;
    size_t k = n;
    g10_trim(&s, &k);
    if (k >= 5 && memcmp(s, "time=", 5) == 0) {
        *rn = k;
        return s;
    }
    const char *m = NULL, *e = p + n;
    for (const char *q = p; !m && e - q >= 12 && (q = memchr(q, 'O', (size_t)(e - q - 11))); q++)
        if (memcmp(q, "OperationLog", 12) == 0)
            m = q;
    if (!m)
        return NULL;
    const char *q = m + 12, *end = p + n;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    if (q == end || (*q != ':' && *q != '-'))
        return NULL;
    q++;
    *rn = (size_t)(end - q);
    return q;
}

/* The time of a record in ns; decides the unit on the first record in auto mode. */
static int record_time(octx *c, const char *v, size_t vn, uint64_t line, int64_t *t)
{
    if (c->automatic) {
        int64_t raw;
        if (!g10_parse_time(v, vn, 1, &raw)) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "time is not a number: '%.*s'",
                            (int)(vn > 40 ? 40 : vn), v);
            return 0;
        }
        int64_t a = raw < 0 ? -raw : raw;
        int64_t u = a >= MS_FROM && a < MS_BELOW ? 1000000 : a >= NS_FROM ? 1 : 0;
        if (!u) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line,
                            "time %lld is neither epoch milliseconds nor epoch nanoseconds: give the unit",
                            (long long)raw);
            return 0;
        }
        if (c->unit && u != c->unit) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line,
                            "time %lld is in %s but earlier records were in %s", (long long)raw,
                            u == 1 ? "nanoseconds" : "milliseconds", c->unit == 1 ? "nanoseconds" : "milliseconds");
            return 0;
        }
        c->unit = u;
    }
    if (!g10_parse_time(v, vn, c->unit, t)) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "time is not a number or out of range: '%.*s'",
                        (int)(vn > 40 ? 40 : vn), v);
        return 0;
    }
    return 1;
}

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static lp_status one_record(octx *c, const char *p, size_t n, uint64_t line, lp_error *err)
{
    lp_str kv[2 * MAXTAGS];
    uint32_t nt = 0;
    const char *tv = NULL, *ev = NULL;
    size_t tn = 0, en = 0;
    lp_str phase = LP_STR_NONE;
    const char *f;
    size_t fn;
    while (g10_next_field(&p, &n, ',', &f, &fn)) {
        g10_trim(&f, &fn);
        if (!fn)
            continue;
        const char *eq = memchr(f, '=', fn);
        if (!eq) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "'%.*s' is not key=value",
                            (int)(fn > 40 ? 40 : fn), f);
            return LP_OK;
        }
        const char *k = f, *v = eq + 1;
        size_t kn = (size_t)(eq - f), vn = fn - kn - 1;
        g10_trim(&k, &kn);
        g10_trim(&v, &vn);
        if (!kn) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "empty key");
            return LP_OK;
        }
        if (kn == 4 && memcmp(k, "time", 4) == 0) {
            tv = v, tn = vn;
        } else if (kn == 5 && memcmp(k, "event", 5) == 0) {
            ev = v, en = vn;
        } else if (kn == 5 && memcmp(k, "phase", 5) == 0) {
            if (!vn || lp_strtab_intern(&c->d->strs, v, vn, &phase))
                return vn ? nomem(err) : (lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line,
                                                          "empty phase name"), LP_OK);
        } else {
            if (nt == MAXTAGS) {
                lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_LIMIT, c->fname, line, "more than %d tags", MAXTAGS);
                return LP_OK;
            }
            lp_str ks, vs;
            if (lp_strtab_intern(&c->d->strs, k, kn, &ks) || lp_strtab_intern(&c->d->strs, v, vn, &vs))
                return nomem(err);
            for (uint32_t i = 0; i < nt; i++)
                if (kv[2 * i] == ks) {
                    lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "key '%.*s' given twice",
                                    (int)kn, k);
                    return LP_OK;
                }
            kv[2 * nt] = ks;
            kv[2 * nt + 1] = vs;
            nt++;
        }
    }
    if (!tv || !ev) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "record without %s",
                        !tv ? "time=" : "event=");
        return LP_OK;
    }
    uint8_t kind;
    if (en == 5 && memcmp(ev, "start", 5) == 0)
        kind = LP_G10_EV_START;
    else if (en == 3 && memcmp(ev, "end", 3) == 0)
        kind = LP_G10_EV_END;
    else if (en == 6 && memcmp(ev, "single", 6) == 0)
        kind = LP_G10_EV_SINGLE;
    else {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line,
                        "event must be start, end or single, not '%.*s'", (int)(en > 40 ? 40 : en), ev);
        return LP_OK;
    }
    if (kind != LP_G10_EV_SINGLE && phase == LP_STR_NONE) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "%s event without phase=",
                        kind == LP_G10_EV_START ? "start" : "end");
        return LP_OK;
    }
    int64_t t;
    if (!record_time(c, tv, tn, line, &t))
        return LP_OK;
    lp_g10_data *d = c->d;
    lp_g10_event e = {t, kind, phase, 0, c->file, line};
    lp_status st = lp_g10_data_tags(d, kv, nt, &e.tags, err);
    if (st)
        return st;
    if (lp_grow_at(&d->ev, &d->capev, d->nev + 1, sizeof *d->ev))
        return nomem(err);
    d->ev[d->nev++] = e;
    return LP_OK;
}

lp_status lp_g10_read_oplog(lp_g10_data *d, lp_input *in, const lp_g10_read_opts *opts, lp_diags *ds,
                            lp_error *err)
{
    octx c = {d, ds, lp_input_name(in), 0, opts ? opts->time_unit_ns : 0, 0};
    c.automatic = c.unit == 0;
    if (c.unit < 0)
        return lp_error_set(err, LP_ERR_ARG, "negative time unit");
    if (lp_strtab_intern(&d->strs, c.fname, strlen(c.fname), &c.file))
        return nomem(err);
    lp_lines L;
    lp_lines_init(&L, in, G10_LINE_MAX, 0);
    const char *p;
    size_t n;
    lp_status st;
    while ((st = lp_lines_next(&L, &p, &n, NULL, err)) == LP_OK) {
        size_t rn;
        const char *r = record_text(p, n, &rn);
        if (!r) {
            d->ignored_lines++;
            continue;
        }
        st = one_record(&c, r, rn, L.line, err);
        if (st)
            break;
    }
    lp_lines_release(&L);
    if (st == LP_END)
        return LP_OK;
    return lp_error_push(err, "reading %s", c.fname);
}
