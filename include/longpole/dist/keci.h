/* keci.h: what moves between ranks for the distributed critical path of kernel traces
 * (docs/distributed.md; papers/distributed-critical-path-eci.txt §III-C, §IV): a host's
 * events, whole or as its External Communication Index (ECI), and the packets matched
 * over the merged ECIs.
 *
 * A host's ECI is its skeleton: its TCP send and receive events (NET_SEND, NET_RECV:
 * inet-level and device-level, with the index each has among the host's events) and its
 * socket address table. The paper's ECI keeps only the remote hosts a trace exchanged
 * with; this one keeps every key, so rank 0 matches packets across hosts with the very
 * matcher of the single-process path (lp_kmatch_run over the skeletons, its event
 * indices mapped back): the matched packets, the unmatched counts and the clock maps
 * are those of `longpole cp --thread` on the same traces, and each packet names the
 * host, hence the rank, that owns its other end.
 *
 * Invariants: a packed host unpacks to the same events (strings re-interned in the
 * receiving trace's table), socket table and reader figures; skeleton events keep the
 * order they had, so the matcher's order (and hence its answer) is unchanged.
 */
#ifndef LONGPOLE_KECI_H
#define LONGPOLE_KECI_H

#include <stdint.h>
#include "longpole/base/dbuf.h"
#include "longpole/import/kernel.h"
#include "longpole/analysis/kernel/kgraph.h"

/* Append host h of kt, packed, to out: every event, or only its skeleton. `index` is
 * the host's place among all the job's hosts (the order of the command line). */
lp_status lp_keci_pack_host(const lp_ktrace *kt, uint32_t h, uint32_t index, int skeleton, lp_dbuf *out,
                            lp_error *err);

/* A trace of nhosts hosts, all empty (no events, no name): what packed hosts unpack into. */
lp_status lp_keci_ktrace_new(uint32_t nhosts, lp_ktrace **out, lp_error *err);

/* Unpack the next packed host of r into kt->host[index] (index < nhosts; the host must
 * have no events yet: a name alone is replaced). *index receives it; for a skeleton, *orig (may be NULL) receives the
 * original index of each event ([nev], lp_free); *nev_read (may be NULL) the number of
 * events the reader read (the whole host's, also for a skeleton). LP_ERR_FORMAT with
 * the byte offset for bytes that are not a packed host. */
lp_status lp_keci_unpack_host(lp_drd *r, lp_ktrace *kt, uint32_t *index, uint64_t **orig, uint64_t *nev_read,
                              lp_error *err);

/* The merge at rank 0: packets matched and clocks synchronised over the skeletons of
 * every host (orig[h]: their original event indices), with sev/rev mapped back to the
 * hosts' whole event lists. Equal to lp_kmatch_run over the whole traces. */
lp_status lp_keci_match(const lp_ktrace *skel, uint64_t *const *orig, lp_kmatch *m, lp_error *err);

/* The match over the wire (packets and clocks). */
void lp_keci_pack_match(const lp_kmatch *m, uint32_t nhosts, lp_dbuf *out);
lp_status lp_keci_unpack_match(lp_drd *r, uint32_t nhosts, lp_kmatch *m, lp_error *err);

/* The key a TCP segment is found by at the other end (AL2's broadcast question "who
 * sent this?"): its sequence, acknowledgement and TCP flags. */
static inline uint64_t lp_keci_key(const lp_kev *e)
{
    return ((uint64_t)(uint32_t)e->a << 32 | (uint32_t)e->b) * 0x9E3779B97F4A7C15ull ^ (e->flags & 0xffffu);
}

/* ---- host graph parts (what the query moves instead of events) -------------------------
 * A host's part of the execution graph: its workers, their vertices, the links inside
 * the host, its unmatched TCP keys and the vertices of its packets' ends (send vertex,
 * receive target), taken from a graph that holds that host's part exactly (a partial
 * build with the whole match, lp_kgraph_opts.partial). Rank 0 assembles the parts of
 * the hosts it has, with the network links between them decided as lp_kgraph_build
 * decides them (an end without context: no link; received no later than sent: no
 * link), into a graph equal, for those hosts, to the whole graph. */

/* Append host h's part of g to out; sv, tv ([m->npk]) the vertices of g's packet ends. */
lp_status lp_keci_pack_part(const lp_kgraph *g, uint32_t h, const lp_kmatch *m, const uint32_t *sv,
                            const uint32_t *tv, lp_dbuf *out, lp_error *err);
/* The host index of a packed part (UINT32_MAX if the bytes are not one). */
uint32_t lp_keci_part_host(const void *buf, size_t n);
/* Assemble a graph of nhosts hosts named names[h] from parts[h] (NULL: the host is
 * absent) with the clocks of m applied when sync; *tv ([m->npk], may be NULL) receives
 * each packet's target vertex in it (LP_NONE32: absent or none). The graph's stats are
 * zero. LP_ERR_FORMAT for bytes that are not a part, or a graph that breaks an invariant. */
lp_status lp_keci_assemble(uint32_t nhosts, const char *const *names, const lp_dbuf *parts, const lp_kmatch *m,
                           int sync, lp_kgraph **out, uint32_t *tv, lp_error *err);

#endif
