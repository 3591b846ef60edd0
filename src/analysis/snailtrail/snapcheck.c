/* snapcheck.c: the instrumentation checks of one snapshot (snapshot.h; SnailTrail
 * App. A.2, Properties 1 and 2, with lp_check_run's definitions restricted to the
 * window): vertices after t0 with no incoming edge, and the intervals where every
 * active worker waits and no message is in flight (a sweep over the sorted boundaries,
 * skipped when some worker is busy from t0 to t1). */
#include "longpole/analysis/snailtrail/snapshot.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

void lp_snapcheck_buf_release(lp_snapcheck_buf *buf)
{
    lp_free(buf->key);
    lp_free(buf->tmp);
    memset(buf, 0, sizeof *buf);
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Sort n keys (LSD radix, 11-bit digits; digits every key shares are skipped). The
 * result is in k; tmp is scratch of the same size. */
static void sort_keys(uint64_t *k, uint64_t *tmp, size_t n)
{
    if (n < 512) {
        qsort(k, n, sizeof *k, cmp_u64);
        return;
    }
    uint64_t all_or = 0, all_and = ~UINT64_C(0);
    for (size_t i = 0; i < n; i++) {
        all_or |= k[i];
        all_and &= k[i];
    }
    uint64_t differ = all_or ^ all_and;
    size_t cnt[2048];
    uint64_t *a = k, *b = tmp;
    for (unsigned shift = 0; shift < 64; shift += 11) {
        if (!((differ >> shift) & 2047))
            continue;
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(a[i] >> shift) & 2047]++;
        size_t sum = 0;
        for (size_t d = 0; d < 2048; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            b[cnt[(a[i] >> shift) & 2047]++] = a[i];
        uint64_t *x = a;
        a = b;
        b = x;
    }
    if (a != k)
        memcpy(k, a, n * sizeof *k);
}

/* Property 2 events: (time - t0) << 3 | code. */
enum { EV_ACT_ON = 0, EV_ACT_OFF, EV_WAIT_ON, EV_WAIT_OFF, EV_MSG_ON, EV_MSG_OFF };

lp_status lp_snapshot_check(const lp_snapshot *s, lp_snapcheck_buf *buf, lp_snapcheck *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    const lp_trace *t = s->t;
    if (!s->nv)
        return LP_OK;
    const int64_t t0 = s->t0, t1 = s->t1;
    /* Property 1: a vertex after t0 with neither a worker edge nor a message in */
    for (uint32_t w = 0; w < s->nworkers; w++)
        for (uint64_t v = s->voff[w]; v < s->voff[w + 1]; v++) {
            if (s->vtime[v] == t0)
                continue;
            if ((v > s->voff[w] && s->vact[v] != LP_NONE32) || s->vin[v + 1] > s->vin[v])
                continue;
            if (out->np1 < LP_SNAPCHECK_KEEP) {
                out->p1_worker[out->np1] = w;
                out->p1_time[out->np1] = s->vtime[v];
            }
            out->np1++;
        }
    /* Property 2: nothing to check if one worker is busy from t0 to t1 */
    for (uint32_t w = 0; w < s->nworkers; w++)
        if (s->voff[w] < s->voff[w + 1] && s->vtime[s->voff[w]] == t0 && s->vtime[s->voff[w + 1] - 1] == t1 &&
            s->w_nwait[w] == 0)
            return LP_OK;
    size_t n = 2 * (size_t)s->nactive + 2 * (size_t)s->nin;
    for (uint32_t w = 0; w < s->nworkers; w++)
        n += 2 * s->w_nwait[w];
    if (n > buf->cap || !buf->key) {
        size_t cap = n + n / 4 + 16;
        uint64_t *k = lp_reallocarray(NULL, cap, sizeof *k), *x = lp_reallocarray(NULL, cap, sizeof *x);
        if (!k || !x) {
            lp_free(k);
            lp_free(x);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory checking a window");
        }
        lp_free(buf->key);
        lp_free(buf->tmp);
        buf->key = k;
        buf->tmp = x;
        buf->cap = cap;
    }
    uint64_t *key = buf->key;
    size_t k = 0;
#define EV(time, code) (key[k++] = ((uint64_t)((time) - t0) << 3) | (code))
    for (uint32_t w = 0; w < s->nworkers; w++) {
        uint64_t a = s->voff[w], z = s->voff[w + 1];
        if (a == z)
            continue;
        EV(s->vtime[a], EV_ACT_ON);
        EV(s->vtime[z - 1], EV_ACT_OFF);
        if (s->w_nwait[w])
            for (uint64_t v = a + 1; v < z; v++)
                if (s->vact[v] != LP_NONE32 && t->atype[s->vact[v]] == LP_TYPE_WAITING) {
                    EV(s->vtime[v - 1], EV_WAIT_ON);
                    EV(s->vtime[v], EV_WAIT_OFF);
                }
    }
    for (uint64_t v = 0; v < s->nv; v++)
        for (uint32_t j = s->vin[v]; j < s->vin[v + 1]; j++) {
            int64_t a = s->in[j].st, b = s->vtime[v];
            if (b > a) {
                EV(a, EV_MSG_ON);
                EV(b, EV_MSG_OFF);
            }
        }
#undef EV
    sort_keys(key, buf->tmp, k);
    int64_t act = 0, wt = 0, fl = 0, last_to = INT64_MIN;
    for (size_t i = 0; i < k;) {
        uint64_t now = key[i] >> 3;
        for (; i < k && (key[i] >> 3) == now; i++) {
            switch (key[i] & 7) {
            case EV_ACT_ON: act++; break;
            case EV_ACT_OFF: act--; break;
            case EV_WAIT_ON: wt++; break;
            case EV_WAIT_OFF: wt--; break;
            case EV_MSG_ON: fl++; break;
            default: fl--; break;
            }
        }
        if (i == k)
            break;
        uint64_t next = key[i] >> 3;
        if (act > 0 && wt >= act && fl == 0) {
            int64_t from = t0 + (int64_t)now, to = t0 + (int64_t)next;
            if (out->np2 && from == last_to) { /* extends the previous interval */
                if (out->np2 <= LP_SNAPCHECK_KEEP)
                    out->p2_to[out->np2 - 1] = to;
            } else {
                if (out->np2 < LP_SNAPCHECK_KEEP) {
                    out->p2_from[out->np2] = from;
                    out->p2_to[out->np2] = to;
                    out->p2_active[out->np2] = (uint32_t)act;
                }
                out->np2++;
            }
            last_to = to;
            out->p2_ns += to - from;
        }
    }
    return LP_OK;
}
