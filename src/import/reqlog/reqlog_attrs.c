/* reqlog_attrs.c: request attributes from a table (lp_reqlog_load_attrs, reqlog.h): a
 * CSV/TSV file with a header naming a request column (--columns request=..., else one
 * of its usual names) and attribute columns, or JSON lines with a request key and
 * attribute members; each row's values become its request's attributes (the first
 * value of an attribute wins, a different later one is reported). Rows of requests not
 * in the log are counted, not reported.
 *
 * Invariants: problems are reported with the file and line and the row skipped; only a
 * header that cannot be read (bad quote, no request column) or a line too long stops
 * the file.
 */
#include "import/reqlog/reqlog_int.h"
#include "longpole/codec/json.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static lp_status attr_id(lp_reqlog *rl, const char *name, size_t n, uint32_t *out, lp_error *err)
{
    for (uint32_t a = 0; a < rl->nattrs; a++)
        if (lp_strtab_len(&rl->names, rl->attr_name[a]) == n &&
            memcmp(lp_reqlog_str(rl, rl->attr_name[a]), name, n) == 0) {
            *out = a;
            return LP_OK;
        }
    if (rl->nattrs >= 4096)
        return lp_error_set(err, LP_ERR_LIMIT, "more than 4096 request attributes");
    lp_str s;
    if (lp_strtab_intern(&rl->names, name, n, &s))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_str *an = lp_reallocarray(rl->attr_name, rl->nattrs + 1, sizeof *an);
    if (!an)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    rl->attr_name = an;
    lp_str *ra = lp_reallocarray(rl->rattr, (size_t)(rl->nattrs + 1) * (rl->nreqs ? rl->nreqs : 1), sizeof *ra);
    if (!ra)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    rl->rattr = ra;
    memset(ra + (size_t)rl->nattrs * rl->nreqs, 0xff, rl->nreqs * sizeof *ra);
    an[rl->nattrs] = s;
    *out = rl->nattrs++;
    return LP_OK;
}

uint64_t lp_reqlog_find(const lp_reqlog *rl, const char *id)
{
    lp_str s = lp_strtab_find(&rl->names, id, strlen(id));
    if (s == LP_STR_NONE || s >= rl->nname_req || rl->name_req[s] == UINT32_MAX)
        return UINT64_MAX;
    return rl->name_req[s];
}

static int set_attr(lp_reqlog *rl, uint64_t r, uint32_t a, const char *v, size_t vn, lp_diags *ds, const char *path,
                    uint64_t line)
{
    if (vn == 0)
        return 0;
    lp_str s;
    if (lp_strtab_intern(&rl->names, v, vn, &s))
        return -1;
    lp_str *slot = &rl->rattr[(size_t)a * rl->nreqs + r];
    if (*slot == LP_STR_NONE)
        *slot = s;
    else if (*slot != s)
        lp_diags_report(ds, LP_SEV_WARNING, LP_RULE_FIELD, path, line,
                        "attribute %s of request %s is '%s' here but '%s' earlier; keeping the first",
                        lp_reqlog_str(rl, rl->attr_name[a]), lp_reqlog_str(rl, rl->req_name[r]),
                        lp_reqlog_str(rl, s), lp_reqlog_str(rl, *slot));
    return 0;
}

/* The state of reading one attribute table (lp_reqlog_load_attrs). */
typedef struct attrload {
    lp_reqlog *rl;
    const char *path;
    const lp_reqlog_opts *o;
    lp_diags *diags;
    uint64_t *unknown;
    lp_error *err;
    const char **f;
    size_t *fl;
    uint32_t *colattr;       /* column -> attribute (UINT32_MAX: the request column) */
    char *scratch;
    size_t scap;
    int fmt;                 /* 0 unknown, 1 csv, 2 jsonl */
    int reqcol, ncol;
    char delim;
} attrload;

/* The header line of a CSV/TSV table: the request column and the attribute columns. */
static lp_status attrs_header(attrload *A, const char *s, size_t n, uint64_t line)
{
    const lp_reqlog_opts *o = A->o;
    const char **f = A->f;
    size_t *fl = A->fl;
    lp_status st;
    A->fmt = 1;
    A->delim = o->delimiter ? o->delimiter : (o->format == LP_RL_TSV || memchr(s, '\t', n)) ? '\t' : ',';
    int nf = rl_csv_split(s, n, A->delim, f, fl, RL_MAXCOLS, A->scratch, A->scap);
    if (nf < 0)
        return lp_error_set(A->err, LP_ERR_FORMAT, "%s:%llu: the header has a bad quote", A->path,
                            (unsigned long long)line);
    A->ncol = nf > RL_MAXCOLS ? RL_MAXCOLS : nf;
    const char *want = o->col[LP_RL_REQUEST];
    for (int c = 0; c < A->ncol; c++) {
        int isreq = 0;
        if (want)
            isreq = (fl[c] == strlen(want) && strncasecmp(f[c], want, fl[c]) == 0) ||
                    (atoi(want) == c + 1 && want[0] >= '1' && want[0] <= '9');
        else
            isreq = rl_role_alias(LP_RL_REQUEST, f[c], fl[c]);
        if (isreq && A->reqcol < 0) {
            A->reqcol = c;
            A->colattr[c] = UINT32_MAX;
        } else if ((st = attr_id(A->rl, f[c], fl[c], &A->colattr[c], A->err)) != LP_OK) {
            return st;
        }
    }
    if (A->reqcol < 0)
        return lp_error_set(A->err, LP_ERR_FORMAT, "%s:%llu: the header has no request column", A->path,
                            (unsigned long long)line);
    return LP_OK;
}

/* A row of a CSV/TSV table: its request, then its attribute values. */
static lp_status attrs_csv_line(attrload *A, const char *s, size_t n, uint64_t line)
{
    const char **f = A->f;
    size_t *fl = A->fl;
    int reqcol = A->reqcol;
    int nf = rl_csv_split(s, n, A->delim, f, fl, A->ncol, A->scratch, A->scap);
    if (nf < 0 || nf <= reqcol || fl[reqcol] == 0) {
        lp_diags_report(A->diags, LP_SEV_ERROR, LP_RULE_FIELD, A->path, line,
                        nf < 0 ? "bad quoting" : "missing request id");
        return LP_OK;
    }
    char idb[1024];
    size_t idn = fl[reqcol] < sizeof idb - 1 ? fl[reqcol] : sizeof idb - 1;
    memcpy(idb, f[reqcol], idn);
    idb[idn] = '\0';
    uint64_t r = lp_reqlog_find(A->rl, idb);
    if (r == UINT64_MAX) {
        (*A->unknown)++;
        return LP_OK;
    }
    for (int c = 0; c < nf && c < A->ncol; c++)
        if (c != reqcol && set_attr(A->rl, r, A->colattr[c], f[c], fl[c], A->diags, A->path, line))
            return lp_error_set(A->err, LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

/* One pass over a JSON line's object: pass 0 finds the request (*cur: its index,
 * UINT64_MAX - 1 if unknown), pass 1 sets the other members as its attributes.
 * *ok is 0 when the line is not valid JSON (j holds the reason). */
static lp_status attrs_json_pass(attrload *A, lp_json_pull *j, const char *s, size_t n, int pass, uint64_t *cur,
                                 uint64_t line, int *ok)
{
    char *scratch = A->scratch;
    size_t scap = A->scap;
    lp_status st;
    lp_json_pull_init(j, s, n);
    size_t used = 0;
    int has = lp_json_pull_obj(j);
    *ok = has >= 0;
    while (*ok && has) {
        const char *k, *v;
        size_t kn, vn;
        int kind;
        if (lp_json_pull_key(j, &k, &kn, scratch + used, scap - used)) {
            *ok = 0;
            break;
        }
        if (k == scratch + used)
            used += kn;
        int c = lp_json_pull_peek(j);
        const char *want = A->o->col[LP_RL_REQUEST];
        int isreq = want ? (kn == strlen(want) && strncmp(k, want, kn) == 0)
                         : rl_role_alias(LP_RL_REQUEST, k, kn);
        if (c == '{' || c == '[') {
            if (lp_json_pull_skip(j)) {
                *ok = 0;
                break;
            }
        } else {
            if (lp_json_pull_scalar(j, &v, &vn, scratch + used, scap - used, &kind)) {
                *ok = 0;
                break;
            }
            if (v == scratch + used)
                used += vn;
            if (kind == 'z')
                vn = 0;
            if (pass == 0 && isreq && *cur == UINT64_MAX) {
                char idb[1024];
                size_t idn = vn < sizeof idb - 1 ? vn : sizeof idb - 1;
                memcpy(idb, v, idn);
                idb[idn] = '\0';
                *cur = lp_reqlog_find(A->rl, idb);
                if (*cur == UINT64_MAX)
                    *cur = UINT64_MAX - 1;
            } else if (pass == 1 && !isreq && *cur < UINT64_MAX - 1) {
                uint32_t a;
                if ((st = attr_id(A->rl, k, kn, &a, A->err)) != LP_OK)
                    return st;
                if (set_attr(A->rl, *cur, a, v, vn, A->diags, A->path, line))
                    return lp_error_set(A->err, LP_ERR_NOMEM, "out of memory");
            }
        }
        int nx = lp_json_pull_next(j, '}');
        if (nx < 0) {
            *ok = 0;
            break;
        }
        has = nx;
    }
    if (*ok && !lp_json_pull_at_end(j))
        *ok = 0;
    return LP_OK;
}

/* A JSON line: two passes over the object: find the request, then the attributes. */
static lp_status attrs_json_line(attrload *A, const char *s, size_t n, uint64_t line)
{
    uint64_t cur = UINT64_MAX;
    lp_status st;
    for (int pass = 0; pass < 2; pass++) {
        lp_json_pull j;
        int ok;
        if ((st = attrs_json_pass(A, &j, s, n, pass, &cur, line, &ok)))
            return st;
        if (!ok) {
            if (pass == 0)
                lp_diags_report(A->diags, LP_SEV_ERROR, LP_RULE_SYNTAX, A->path, line, "bad JSON: %s",
                                j.why ? j.why : "text after the object");
            break;
        }
        if (pass == 0 && cur == UINT64_MAX) {
            lp_diags_report(A->diags, LP_SEV_ERROR, LP_RULE_FIELD, A->path, line, "missing request id");
            break;
        }
        if (pass == 0 && cur == UINT64_MAX - 1) {
            (*A->unknown)++;
            break;
        }
    }
    return LP_OK;
}

lp_status lp_reqlog_load_attrs(lp_reqlog *rl, const char *path, const lp_reqlog_opts *o, lp_diags *diags,
                               uint64_t *unknown, lp_error *err)
{
    *unknown = 0;
    lp_input *in;
    lp_status st = lp_input_open(&in, path, err);
    if (st)
        return st;
    size_t cap = 1 << 20, len = 0, pos = 0;
    char *buf = lp_malloc(cap + 1);
    attrload A = {rl, path, o, diags, unknown, err, NULL, NULL, NULL, NULL, 0, 0, -1, 0, ','};
    A.f = lp_malloc(RL_MAXCOLS * sizeof *A.f);
    A.fl = lp_malloc(RL_MAXCOLS * sizeof *A.fl);
    A.colattr = lp_malloc(RL_MAXCOLS * sizeof *A.colattr);
    int eof = 0;
    uint64_t line = 0;
    if (!buf || !A.f || !A.fl || !A.colattr) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (;;) {
        char *nl = pos < len ? memchr(buf + pos, '\n', len - pos) : NULL;
        if (!nl && !eof) {
            memmove(buf, buf + pos, len - pos);
            len -= pos;
            pos = 0;
            if (len == cap) {
                if (cap >= RL_MAXLINE) {
                    st = lp_error_set(err, LP_ERR_FORMAT, "%s: line %llu is too long", path,
                                      (unsigned long long)line + 1);
                    goto out;
                }
                char *nb = lp_realloc(buf, cap * 2 + 1);
                if (!nb) {
                    st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                    goto out;
                }
                buf = nb, cap *= 2;
            }
            size_t got;
            if ((st = lp_input_read(in, buf + len, cap - len, &got, err)) != LP_OK)
                goto out;
            if (!got)
                eof = 1;
            len += got;
            continue;
        }
        if (!nl && pos >= len)
            break;
        size_t e = nl ? (size_t)(nl - buf) : len;
        char *s = buf + pos;
        size_t n = e - pos;
        pos = nl ? e + 1 : e;
        line++;
        if (n && s[n - 1] == '\r')
            n--;
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n || s[i] == '#')
            continue;
        if (A.scap < n + 1) {
            lp_free(A.scratch);
            A.scap = n + 4096;
            A.scratch = lp_malloc(A.scap);
            if (!A.scratch) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                goto out;
            }
        }
        if (A.fmt == 0) {
            if (s[i] == '{' || o->format == LP_RL_JSONL) {
                A.fmt = 2;
            } else {
                if ((st = attrs_header(&A, s, n, line)))
                    goto out;
                continue;
            }
        }
        st = A.fmt == 1 ? attrs_csv_line(&A, s, n, line) : attrs_json_line(&A, s, n, line);
        if (st)
            goto out;
    }
out:
    lp_input_close(in);
    lp_free(buf);
    lp_free(A.f);
    lp_free(A.fl);
    lp_free(A.colattr);
    lp_free(A.scratch);
    return st;
}
