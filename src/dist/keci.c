/* keci.c: hosts of kernel traces packed for the wire, whole or as their External
 * Communication Index (the skeleton of their TCP events), and the merge of the ECIs at
 * rank 0 (keci.h).
 *
 * A packed host: u32 magic, u32 index, u32 skeleton, its strings (u32 count, then each
 * as u32 length + bytes: the host's name, source, and every event name, renumbered
 * 0..count-1), the reader's figures, u64 nev + nev lp_kev (names renumbered) [+ nev u64
 * original indices for a skeleton], u64 nsock + nsock lp_ksock. The ranks of a job are
 * one architecture: structures travel as they are in memory.
 */
#include "longpole/dist/keci.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <string.h>

#define KECI_MAGIC 0x4943454bu /* "KECI" */
#define NO_STR UINT32_MAX

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static int in_skeleton(const lp_kev *e) { return e->type == LP_KEV_NET_SEND || e->type == LP_KEV_NET_RECV; }

/* The packed id of string s (added to the list on first use). */
static uint32_t str_id(lp_hmap *ids, lp_str *list, uint32_t *n, lp_str s, int *fail)
{
    if (s == LP_STR_NONE)
        return NO_STR;
    uint64_t v;
    if (lp_hmap_get(ids, s, &v))
        return (uint32_t)v;
    if (lp_hmap_put(ids, s, *n, NULL)) {
        *fail = 1;
        return NO_STR;
    }
    list[*n] = s;
    return (*n)++;
}

lp_status lp_keci_pack_host(const lp_ktrace *kt, uint32_t h, uint32_t index, int skeleton, lp_dbuf *out,
                            lp_error *err)
{
    const lp_khost *H = &kt->host[h];
    uint64_t nev = 0;
    for (uint64_t i = 0; i < H->nev; i++)
        nev += !skeleton || in_skeleton(&H->ev[i]);
    lp_kev *ev = lp_malloc((nev ? nev : 1) * sizeof *ev);
    uint64_t *orig = skeleton ? lp_malloc((nev ? nev : 1) * 8) : NULL;
    lp_str *list = lp_malloc((2 * nev + 2) * sizeof *list);
    lp_hmap ids = {0};
    int fail = !ev || (skeleton && !orig) || !list;
    uint32_t nstr = 0;
    uint32_t name = fail ? 0 : str_id(&ids, list, &nstr, H->name, &fail);
    uint32_t source = fail ? 0 : str_id(&ids, list, &nstr, H->source, &fail);
    for (uint64_t i = 0, j = 0; !fail && i < H->nev; i++) {
        if (skeleton && !in_skeleton(&H->ev[i]))
            continue;
        ev[j] = H->ev[i];
        ev[j].name = str_id(&ids, list, &nstr, H->ev[i].name, &fail);
        ev[j].name2 = str_id(&ids, list, &nstr, H->ev[i].name2, &fail);
        if (orig)
            orig[j] = i;
        j++;
    }
    if (!fail) {
        lp_dbuf_u32(out, KECI_MAGIC);
        lp_dbuf_u32(out, index);
        lp_dbuf_u32(out, skeleton ? 1 : 0);
        lp_dbuf_u32(out, nstr);
        for (uint32_t s = 0; s < nstr; s++) {
            lp_dbuf_u32(out, lp_strtab_len(&kt->strs, list[s]));
            lp_dbuf_put(out, lp_strtab_get(&kt->strs, list[s]), lp_strtab_len(&kt->strs, list[s]));
        }
        uint64_t fig[] = {name, source, H->ncpus, H->nev + H->ndropped, H->nreordered, H->nlost, H->nother, H->nbad, H->nstreams,
                          H->bytes, H->nchunks, H->ndropped};
        lp_dbuf_put(out, fig, sizeof fig);
        lp_dbuf_u64(out, nev);
        lp_dbuf_put(out, ev, nev * sizeof *ev);
        if (orig)
            lp_dbuf_put(out, orig, nev * 8);
        lp_dbuf_u64(out, H->nsock);
        lp_dbuf_put(out, H->sock, H->nsock * sizeof *H->sock);
        fail = out->fail;
    }
    lp_hmap_release(&ids);
    lp_free(ev);
    lp_free(orig);
    lp_free(list);
    return fail ? nomem(err) : LP_OK;
}

lp_status lp_keci_ktrace_new(uint32_t nhosts, lp_ktrace **out, lp_error *err)
{
    lp_ktrace *kt = lp_calloc(1, sizeof *kt);
    if (!kt || lp_strtab_init(&kt->strs) || !(kt->host = lp_calloc(nhosts ? nhosts : 1, sizeof *kt->host))) {
        if (kt)
            lp_strtab_release(&kt->strs);
        lp_free(kt);
        return nomem(err);
    }
    kt->nhosts = nhosts;
    for (uint32_t h = 0; h < nhosts; h++)
        kt->host[h].name = kt->host[h].source = LP_STR_NONE;
    *out = kt;
    return LP_OK;
}

static lp_status bad(lp_drd *r, lp_error *err, const char *what)
{
    return lp_error_set(err, LP_ERR_FORMAT, "packed host at byte %zu: %s", r->off, what);
}

/* The strings of a packed host, interned into kt's table. */
static lp_status unpack_strings(lp_drd *r, lp_ktrace *kt, lp_str **ids, uint32_t *nstr, lp_error *err)
{
    *nstr = lp_drd_u32(r);
    if (r->bad || *nstr > (r->n - r->off) / 4)
        return bad(r, err, "string count");
    if (!(*ids = lp_malloc((*nstr ? *nstr : 1) * sizeof **ids)))
        return nomem(err);
    for (uint32_t s = 0; s < *nstr; s++) {
        uint32_t len;
        const char *p = lp_drd_str(r, &len);
        if (!p)
            return bad(r, err, "string");
        if (lp_strtab_intern(&kt->strs, p, len, &(*ids)[s]))
            return nomem(err);
    }
    return LP_OK;
}

static lp_str map_str(const lp_str *ids, uint32_t nstr, uint32_t s, int *badref)
{
    if (s == NO_STR)
        return LP_STR_NONE;
    if (s >= nstr) {
        *badref = 1;
        return LP_STR_NONE;
    }
    return ids[s];
}

lp_status lp_keci_unpack_host(lp_drd *r, lp_ktrace *kt, uint32_t *index, uint64_t **orig, uint64_t *nev_read,
                              lp_error *err)
{
    if (orig)
        *orig = NULL;
    if (lp_drd_u32(r) != KECI_MAGIC || r->bad)
        return bad(r, err, "not a packed host");
    uint32_t h = lp_drd_u32(r), skeleton = lp_drd_u32(r);
    if (r->bad || h >= kt->nhosts || kt->host[h].ev)
        return bad(r, err, "host index out of range or already present");
    lp_str *ids = NULL;
    uint32_t nstr = 0;
    lp_status st = unpack_strings(r, kt, &ids, &nstr, err);
    uint64_t fig[12];
    const void *p = st ? NULL : lp_drd_get(r, sizeof fig);
    uint64_t nev = p ? lp_drd_u64(r) : 0;
    if (!st && (!p || r->bad || nev > (r->n - r->off) / sizeof(lp_kev)))
        st = bad(r, err, "event count");
    lp_khost *H = &kt->host[h];
    uint64_t *o = NULL;
    if (!st && (!(H->ev = lp_malloc((nev ? nev : 1) * sizeof *H->ev)) || (skeleton && !(o = lp_malloc((nev ? nev : 1) * 8)))))
        st = nomem(err);
    int badref = 0;
    if (!st) {
        memcpy(fig, p, sizeof fig);
        memcpy(H->ev, lp_drd_get(r, nev * sizeof *H->ev), nev * sizeof *H->ev);
        H->nev = nev;
        for (uint64_t i = 0; i < nev; i++) {
            H->ev[i].name = map_str(ids, nstr, H->ev[i].name, &badref);
            H->ev[i].name2 = map_str(ids, nstr, H->ev[i].name2, &badref);
        }
        const void *q = o ? lp_drd_get(r, nev * 8) : NULL;
        if (q)
            memcpy(o, q, nev * 8);
        uint64_t nsock = lp_drd_u64(r);
        if (r->bad || nsock > (r->n - r->off) / sizeof(lp_ksock))
            st = bad(r, err, "socket count");
        else if (!(H->sock = lp_malloc((nsock ? nsock : 1) * sizeof *H->sock)))
            st = nomem(err);
        else {
            memcpy(H->sock, lp_drd_get(r, nsock * sizeof *H->sock), nsock * sizeof *H->sock);
            H->nsock = nsock;
        }
    }
    if (!st) {
        H->name = map_str(ids, nstr, (uint32_t)fig[0], &badref);
        H->source = map_str(ids, nstr, (uint32_t)fig[1], &badref);
        H->ncpus = (uint32_t)fig[2];
        H->nreordered = fig[4], H->nlost = fig[5], H->nother = fig[6], H->nbad = fig[7];
        H->nstreams = (uint32_t)fig[8], H->bytes = fig[9], H->nchunks = (uint32_t)fig[10];
        H->ndropped = skeleton ? 0 : fig[11]; /* a skeleton's nev is its own: the read count is *nev_read */
        if (nev_read)
            *nev_read = fig[3];
        if (badref || r->bad)
            st = bad(r, err, "a string id out of range");
    }
    lp_free(ids);
    if (st) { /* leave the host empty */
        lp_free(H->ev);
        lp_free(H->sock);
        lp_str keep = H->name;
        memset(H, 0, sizeof *H);
        H->name = keep, H->source = LP_STR_NONE;
        lp_free(o);
        return st;
    }
    *index = h;
    if (orig)
        *orig = o;
    else
        lp_free(o);
    return LP_OK;
}

lp_status lp_keci_match(const lp_ktrace *skel, uint64_t *const *orig, lp_kmatch *m, lp_error *err)
{
    lp_status st = lp_kmatch_run(skel, m, err);
    if (st)
        return st;
    for (uint64_t p = 0; p < m->npk; p++) {
        lp_kpacket *k = &m->pk[p];
        if (k->shost >= skel->nhosts || k->rhost >= skel->nhosts || k->sev >= skel->host[k->shost].nev ||
            k->rev >= skel->host[k->rhost].nev) {
            lp_kmatch_release(m);
            return lp_error_set(err, LP_ERR_DATA, "merging the ECIs: packet %llu names no skeleton event",
                                (unsigned long long)p);
        }
        k->sev = orig[k->shost][k->sev];
        k->rev = orig[k->rhost][k->rev];
    }
    return LP_OK;
}

void lp_keci_pack_match(const lp_kmatch *m, uint32_t nhosts, lp_dbuf *out)
{
    lp_dbuf_u64(out, m->npk);
    lp_dbuf_u64(out, m->nunmatched_send);
    lp_dbuf_u64(out, m->nunmatched_recv);
    lp_dbuf_put(out, m->pk, m->npk * sizeof *m->pk);
    lp_dbuf_put(out, m->clock, nhosts * sizeof *m->clock);
}

lp_status lp_keci_unpack_match(lp_drd *r, uint32_t nhosts, lp_kmatch *m, lp_error *err)
{
    memset(m, 0, sizeof *m);
    uint64_t npk = lp_drd_u64(r);
    m->nunmatched_send = lp_drd_u64(r);
    m->nunmatched_recv = lp_drd_u64(r);
    if (r->bad || npk > (r->n - r->off) / sizeof *m->pk)
        return lp_error_set(err, LP_ERR_FORMAT, "packed match: %llu packets", (unsigned long long)npk);
    m->pk = lp_malloc((npk ? npk : 1) * sizeof *m->pk);
    m->clock = lp_malloc((nhosts ? nhosts : 1) * sizeof *m->clock);
    if (!m->pk || !m->clock) {
        lp_kmatch_release(m);
        return nomem(err);
    }
    m->npk = npk;
    const void *a = lp_drd_get(r, npk * sizeof *m->pk);
    const void *b = a ? lp_drd_get(r, nhosts * sizeof *m->clock) : NULL;
    if (!a || !b) {
        lp_kmatch_release(m);
        return lp_error_set(err, LP_ERR_FORMAT, "packed match: truncated");
    }
    memcpy(m->pk, a, npk * sizeof *m->pk);
    memcpy(m->clock, b, nhosts * sizeof *m->clock);
    return LP_OK;
}
