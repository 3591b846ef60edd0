/* stream_st.c: SnailTrail's binary log records for the streaming engine (stream.h,
 * snailtrail.h): each connection's bytes are decoded as they come (a record split
 * across reads waits in the connection's buffer, at most one record long), and every
 * event is applied: Start/End to the worker's open activities, Sent/Received as message
 * halves (correlator = message id; a Sent without remote worker goes to any receiver).
 * Bad bytes are reported with the connection's byte offset and skipped one at a time
 * until a record decodes again; Bogus events are skipped. Names as the importer's:
 * worker N is "N", operator N is "N". */
#include "stream_int.h"
#include "longpole/import/snailtrail.h"

#include <stdio.h>
#include <string.h>

#define ST_DIRECT ((uint64_t)1 << 20) /* numbers below are looked up in an array */

/* Worker (op 0) or operator (op 1) number -> id: "N" by name, remembered in an array. */
static lp_status num_name(lp_stream *s, int op, uint64_t num, uint32_t *id, lp_error *err)
{
    uint32_t **arr = op ? &s->st_oid : &s->st_wid;
    size_t *cap = op ? &s->cap_st_oid : &s->cap_st_wid;
    if (num < *cap && (*arr)[num] != LP_NONE32) {
        *id = (*arr)[num];
        return LP_OK;
    }
    char nm[24];
    int n = snprintf(nm, sizeof nm, "%llu", (unsigned long long)num);
    lp_status st = op ? lp_stream_op(s, nm, (size_t)n, id, err) : lp_stream_worker(s, nm, (size_t)n, id, err);
    if (st || num >= ST_DIRECT)
        return st;
    if (num >= *cap) {
        size_t nc = *cap ? *cap : 64;
        while (nc <= num)
            nc *= 2;
        uint32_t *na = lp_reallocarray(*arr, nc, sizeof *na);
        if (!na)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        memset(na + *cap, 0xff, (nc - *cap) * sizeof *na);
        *arr = na;
        *cap = nc;
    }
    (*arr)[num] = *id;
    return LP_OK;
}

static lp_status apply(lp_stream *s, uint32_t ci, sconn *c, const lp_st_record *r, uint64_t off, lp_error *err)
{
    lp_status st;
    if (r->event == LP_ST_BOGUS)
        return LP_OK;
    uint32_t w, peer = LP_NONE32, op = LP_NONE32;
    if ((st = num_name(s, 0, r->local_worker, &w, err)))
        return st;
    if (r->remote_worker >= 0 && (st = num_name(s, 0, (uint64_t)r->remote_worker, &peer, err)))
        return st;
    int64_t t = (int64_t)r->timestamp;
    c->records++;
    if (r->event == LP_ST_SENT || r->event == LP_ST_RECEIVED) {
        if (r->correlator == -1 || (r->event == LP_ST_RECEIVED && peer == LP_NONE32)) {
            s->st.malformed++;
            c->bad++;
            lp_diags_report_at(s->diags, LP_SEV_ERROR, LP_RULE_IMPORT, c->name, off,
                               "%s event on worker %u without a %s: cannot be paired; dropped",
                               lp_st_event_name(r->event), r->local_worker,
                               r->correlator == -1 ? "correlator id" : "remote worker");
            return LP_OK;
        }
        uint64_t id = (uint64_t)r->correlator;
        if (r->event == LP_ST_SENT)
            return lp_stream_send(s, ci, off, w, t, peer, id, err);
        return lp_stream_recv(s, ci, off, w, t, peer, id, err);
    }
    if (!s->st_have_type[r->activity]) {
        const char *tn = lp_st_type_name(r->activity);
        if ((st = lp_stream_type(s, tn, strlen(tn), &s->st_type[r->activity], err)))
            return st;
        s->st_have_type[r->activity] = 1;
    }
    uint16_t ty = s->st_type[r->activity];
    if (r->operator_id >= 0 && (st = num_name(s, 1, (uint64_t)r->operator_id, &op, err)))
        return st;
    if (r->event == LP_ST_START)
        return lp_stream_start(s, ci, off, w, t, ty, op, err);
    return lp_stream_end(s, ci, off, w, t, ty, op, err);
}

/* Decode records from p[0..n) (input offset `base`); returns the bytes consumed. */
static lp_status decode(lp_stream *s, uint32_t ci, const unsigned char *p, size_t n, uint64_t base, int at_end,
                        size_t *consumed, lp_error *err)
{
    sconn *c = &s->conns[ci];
    size_t pos = 0;
    lp_status st = LP_OK;
    while (!st && pos < n) {
        lp_st_record r;
        size_t used;
        char why[200];
        int rc = lp_st_decode(p + pos, n - pos, &r, &used, why, sizeof why);
        if (rc == 0 && !at_end)
            break;
        if (rc <= 0) {
            if (rc == 0) { /* the input ends inside a record */
                s->st.malformed++;
                s->st.truncated++;
                c->bad++;
                lp_diags_report_at(s->diags, LP_SEV_ERROR, LP_RULE_IMPORT, c->name, base + pos,
                                   "the input ends inside a record (%zu byte%s of it); dropped", n - pos,
                                   n - pos == 1 ? "" : "s");
                pos = n;
                break;
            }
            if (!c->st_resync) {
                s->st.malformed++;
                c->bad++;
                lp_diags_report_at(s->diags, LP_SEV_ERROR, LP_RULE_IMPORT, c->name, base + pos + used,
                                   "not a SnailTrail record: %s; skipping to the next valid record", why);
                c->st_resync = 1;
                c->st_bad_from = base + pos;
            }
            pos++;
            continue;
        }
        if (c->st_resync) {
            lp_diags_report_at(s->diags, LP_SEV_NOTE, LP_RULE_IMPORT, c->name, base + pos,
                               "records resume here after %llu bytes skipped",
                               (unsigned long long)(base + pos - c->st_bad_from));
            c->st_resync = 0;
        }
        st = apply(s, ci, c, &r, base + pos, err);
        pos += used;
    }
    *consumed = pos;
    return st;
}

lp_status lp_stream_feed_st(lp_stream *s, uint32_t ci, const unsigned char *buf, size_t n, lp_error *err)
{
    sconn *c = &s->conns[ci];
    lp_status st;
    size_t used;
    if (c->nst && n) {
        /* finish the record begun in an earlier read: with the carry (< 64 bytes) and up
         * to 128 - carry new bytes, a record either completes, fails, or all of buf was
         * taken and it still needs more */
        size_t take = sizeof c->stbuf - c->nst < n ? sizeof c->stbuf - c->nst : n;
        memcpy(c->stbuf + c->nst, buf, take);
        size_t have = c->nst + take;
        if ((st = decode(s, ci, c->stbuf, have, c->stoff, 0, &used, err)))
            return st;
        if (used < c->nst) { /* take == n: keep everything from `used` */
            memmove(c->stbuf, c->stbuf + used, have - used);
            c->nst = have - used;
            c->stoff += used;
            return LP_OK;
        }
        size_t from_buf = used - c->nst;
        c->stoff += used;
        c->nst = 0;
        buf += from_buf;
        n -= from_buf;
    }
    if (!n)
        return LP_OK;
    if ((st = decode(s, ci, buf, n, c->stoff, 0, &used, err)))
        return st;
    c->stoff += used;
    c->nst = n - used; /* shorter than a record (< 64 bytes) */
    memcpy(c->stbuf, buf + used, c->nst);
    return LP_OK;
}

lp_status lp_stream_close_st(lp_stream *s, uint32_t ci, lp_error *err)
{
    sconn *c = &s->conns[ci];
    size_t used;
    lp_status st = LP_OK;
    if (c->nst)
        st = decode(s, ci, c->stbuf, c->nst, c->stoff, 1, &used, err);
    c->nst = 0;
    return st;
}
