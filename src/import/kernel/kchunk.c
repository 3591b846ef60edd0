/* kchunk.c: khost_join_chunks: the hosts of an lp_ktrace that are pieces of one host
 * joined into one.
 *
 * A host's run can come in several traces: LTTng's session rotation writes one complete
 * CTF trace per archive chunk (SESSION/archives/<chunk>/kernel/), and a long ftrace
 * recording may be split in files. Each piece is read as a host of its own; pieces of one
 * host carry its name (CTF env hostname, the recorder's header) and follow each other in
 * time. Here, per name, the pieces sorted by their first event are joined when each one
 * ends no later than the next begins (an empty piece joins anywhere): the events are
 * concatenated in that order (so the host's events stay sorted), the socket tables merged
 * and re-sorted, the counts summed, the CPU count the largest, the source the first
 * piece's, nchunks the number of pieces. Pieces of one name whose times overlap are not
 * pieces of one run (the same trace given twice, or two machines with one name): they stay
 * separate hosts, with a warning naming them, and the graph tells them apart ("#n").
 *
 * Invariants: hosts keep the order of their first piece; no event is dropped or altered;
 * every host has nchunks >= 1. O(hosts^2) name comparisons (hosts are few) plus one copy
 * of the joined events.
 */
#include "import/kernel/kint.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

static const char *hname(const lp_ktrace *kt, const lp_khost *h) { return lp_strtab_get(&kt->strs, h->name); }

static int64_t first_ts(const lp_khost *h) { return h->nev ? h->ev[0].ts : INT64_MAX; }
static int64_t last_ts(const lp_khost *h) { return h->nev ? h->ev[h->nev - 1].ts : INT64_MIN; }

/* Sort the pieces (indices into kt->host) by first event; 1 if they follow each other. */
static int in_time_order(const lp_ktrace *kt, uint32_t *idx, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) /* insertion sort: pieces are few */
        for (uint32_t j = i; j > 0 && first_ts(&kt->host[idx[j]]) < first_ts(&kt->host[idx[j - 1]]); j--) {
            uint32_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    int64_t end = INT64_MIN;
    for (uint32_t i = 0; i < n; i++) {
        const lp_khost *h = &kt->host[idx[i]];
        if (h->nev && h->ev[0].ts < end)
            return 0;
        if (h->nev)
            end = last_ts(h);
    }
    return 1;
}

/* Join the pieces idx[0..n) (time order) into a new host value *out. */
static lp_status join(const lp_ktrace *kt, const uint32_t *idx, uint32_t n, lp_khost *out, lp_error *err)
{
    lp_khost j;
    memset(&j, 0, sizeof j);
    uint64_t nev = 0, nsock = 0;
    for (uint32_t i = 0; i < n; i++)
        nev += kt->host[idx[i]].nev, nsock += kt->host[idx[i]].nsock;
    j.ev = lp_malloc((nev ? nev : 1) * sizeof *j.ev);
    j.sock = lp_malloc((nsock ? nsock : 1) * sizeof *j.sock);
    if (!j.ev || !j.sock) {
        lp_free(j.ev);
        lp_free(j.sock);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    const lp_khost *f = &kt->host[idx[0]];
    j.name = f->name;
    j.source = f->source;
    for (uint32_t i = 0; i < n; i++) {
        const lp_khost *h = &kt->host[idx[i]];
        if (h->nev)
            memcpy(j.ev + j.nev, h->ev, h->nev * sizeof *h->ev);
        if (h->nsock)
            memcpy(j.sock + j.nsock, h->sock, h->nsock * sizeof *h->sock);
        j.nev += h->nev, j.nsock += h->nsock;
        j.ncpus = h->ncpus > j.ncpus ? h->ncpus : j.ncpus;
        j.nreordered += h->nreordered, j.nlost += h->nlost, j.nother += h->nother, j.nbad += h->nbad;
        j.ndropped += h->ndropped;
        j.nstreams += h->nstreams, j.bytes += h->bytes;
        j.nchunks += h->nchunks ? h->nchunks : 1;
    }
    if (j.nsock > 1)
        qsort(j.sock, j.nsock, sizeof *j.sock, khost_sock_cmp);
    *out = j;
    return LP_OK;
}

/* Group of host g's name: the hosts after g with the same name, appended to idx. */
static uint32_t group(const lp_ktrace *kt, uint32_t g, const char *done, uint32_t *idx)
{
    uint32_t n = 0;
    idx[n++] = g;
    for (uint32_t h = g + 1; h < kt->nhosts; h++)
        if (!done[h] && strcmp(hname(kt, &kt->host[h]), hname(kt, &kt->host[g])) == 0)
            idx[n++] = h;
    return n;
}

lp_status khost_join_chunks(lp_ktrace *kt, lp_diags *diags, lp_error *err)
{
    for (uint32_t h = 0; h < kt->nhosts; h++)
        if (!kt->host[h].nchunks)
            kt->host[h].nchunks = 1;
    if (kt->nhosts < 2)
        return LP_OK;
    uint32_t *idx = lp_malloc(kt->nhosts * sizeof *idx);
    char *done = lp_calloc(kt->nhosts, 1); /* 1: joined into an earlier host (to drop) */
    if (!idx || !done) {
        lp_free(idx);
        lp_free(done);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    lp_status st = LP_OK;
    for (uint32_t g = 0; g < kt->nhosts && !st; g++) {
        if (done[g])
            continue;
        uint32_t n = group(kt, g, done, idx);
        if (n < 2)
            continue;
        if (!in_time_order(kt, idx, n)) {
            if (diags)
                lp_diags_report(diags, LP_SEV_WARNING, LP_RULE_IMPORT, lp_strtab_get(&kt->strs, kt->host[g].source), 0,
                                "host '%s' is named by %u traces whose times overlap: not pieces of one run, kept as "
                                "%u hosts (the graph numbers them '#n'); give one trace per host",
                                hname(kt, &kt->host[g]), n, n);
            for (uint32_t i = 0; i < n; i++)
                done[idx[i]] = 2; /* seen, kept */
            continue;
        }
        lp_khost j;
        if ((st = join(kt, idx, n, &j, err)))
            break;
        for (uint32_t i = 0; i < n; i++) {
            lp_free(kt->host[idx[i]].ev);
            lp_free(kt->host[idx[i]].sock);
            done[idx[i]] = 1;
        }
        kt->host[g] = j; /* the group's first host in input order keeps its place */
        done[g] = 2;
    }
    uint32_t w = 0;
    for (uint32_t h = 0; h < kt->nhosts; h++)
        if (done[h] != 1)
            kt->host[w++] = kt->host[h];
        else
            memset(&kt->host[h], 0, sizeof kt->host[h]);
    kt->nhosts = w; /* a failure (in join, before anything was freed) leaves its group as it was */
    lp_free(idx);
    lp_free(done);
    return st;
}
