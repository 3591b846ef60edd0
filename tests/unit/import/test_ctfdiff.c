/* test_ctfdiff.c: the differential test of the direct CTF decoder (ctf_pkt.c) against
 * libbabeltrace2 (ctf.c): every host read both ways (LONGPOLE_CTF=babeltrace and
 * LONGPOLE_CTF=direct) must be identical field for field - host name, CPUs, streams,
 * counts (events, reordered, lost, other, bad), the merged event sequence (timestamp,
 * CPU, type, tids, context tid, flags, a, b, key, both strings by content, which also
 * pins the stream order where timestamps tie) and the socket table - on:
 *  - the real traces of ../shared/data/ctf: scp_src, scp_dest, many-threads (their
 *    packetized metadata, large and compact event headers, 27-bit timestamps wrapping);
 *  - synthetic traces written here by bench/kernel/kgen's CTF writer (kctfw.c: plain
 *    text metadata, big-endian address fields, 64 KiB packets with padding), from the
 *    real traces' events, each host in full and cut to a few thousand events.
 * Skips (77) with a message when ../shared/data/ctf or libbabeltrace2 is absent. The
 * critical paths of the kernel KATs through both decoders are compared by
 * tests/scripts/test_kernel_cli.sh (LONGPOLE_CTF=babeltrace run beside the default). */
#include "longpole/import/kernel.h"
#include "t.h"

#include "../../../bench/kernel/kctfw.c"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA LP_SOURCE_DIR "/../shared/data/ctf"

static lp_diags DS;

static lp_ktrace *rd(const char *dir, const char *mode)
{
    setenv("LONGPOLE_CTF", mode, 1);
    lp_diags_release(&DS);
    lp_diags_init(&DS, 10);
    lp_ktrace *kt = NULL;
    lp_error err;
    const char *paths[] = {dir};
    lp_status st = lp_ktrace_read_flags(paths, 1, LP_KREAD_ALL, &DS, &kt, &err); /* every event compared */
    if (st)
        fprintf(stderr, "%s (%s): %s\n", dir, mode, err.msg);
    CHECK(st == LP_OK);
    unsetenv("LONGPOLE_CTF");
    return kt;
}

static const char *KS(const lp_ktrace *kt, lp_str s) { return s == LP_STR_NONE ? "(none)" : lp_strtab_get(&kt->strs, s); }

/* 1 if equal; reports the first difference */
static int same(const char *what, const lp_ktrace *x, const lp_ktrace *y)
{
    if (!x || !y)
        return 0;
    CHECK_EQ_I(x->nhosts, y->nhosts);
    if (x->nhosts != y->nhosts)
        return 0;
    int ok = 1;
    for (uint32_t h = 0; h < x->nhosts; h++) {
        const lp_khost *a = &x->host[h], *b = &y->host[h];
        CHECK_STR(KS(x, a->name), KS(y, b->name));
        CHECK_EQ_I(a->ncpus, b->ncpus);
        CHECK_EQ_I(a->nstreams, b->nstreams);
        CHECK_EQ_I(a->nev, b->nev);
        CHECK_EQ_I(a->nreordered, b->nreordered);
        CHECK_EQ_I(a->nlost, b->nlost);
        CHECK_EQ_I(a->nother, b->nother);
        CHECK_EQ_I(a->nbad, b->nbad);
        CHECK_EQ_I(a->nsock, b->nsock);
        if (a->nev != b->nev || a->nsock != b->nsock)
            return 0;
        uint64_t diff = 0;
        for (uint64_t i = 0; i < a->nev; i++) {
            const lp_kev *e = &a->ev[i], *f = &b->ev[i];
            int eq = e->ts == f->ts && e->cpu == f->cpu && e->type == f->type && e->kfl == f->kfl && e->tid == f->tid &&
                     e->tid2 == f->tid2 && e->ctx_tid == f->ctx_tid && e->flags == f->flags && e->a == f->a &&
                     e->b == f->b && e->key == f->key && strcmp(KS(x, e->name), KS(y, f->name)) == 0 &&
                     strcmp(KS(x, e->name2), KS(y, f->name2)) == 0;
            if (!eq && diff++ == 0)
                fprintf(stderr,
                        "%s host %u event %llu differs:\n  babeltrace ts=%lld cpu=%u type=%u tid=%d tid2=%d ctx=%d "
                        "flags=%u a=%lld b=%lld key=%llx name=%s name2=%s\n  direct     ts=%lld cpu=%u type=%u tid=%d "
                        "tid2=%d ctx=%d flags=%u a=%lld b=%lld key=%llx name=%s name2=%s\n",
                        what, h, (unsigned long long)i, (long long)e->ts, e->cpu, e->type, e->tid, e->tid2, e->ctx_tid,
                        e->flags, (long long)e->a, (long long)e->b, (unsigned long long)e->key, KS(x, e->name),
                        KS(x, e->name2), (long long)f->ts, f->cpu, f->type, f->tid, f->tid2, f->ctx_tid, f->flags,
                        (long long)f->a, (long long)f->b, (unsigned long long)f->key, KS(y, f->name), KS(y, f->name2));
        }
        CHECK_EQ_I(diff, 0);
        uint64_t sdiff = 0;
        for (uint64_t i = 0; i < a->nsock; i++)
            sdiff += a->sock[i].sk != b->sock[i].sk || a->sock[i].ts != b->sock[i].ts ||
                     a->sock[i].saddr != b->sock[i].saddr || a->sock[i].daddr != b->sock[i].daddr ||
                     a->sock[i].sport != b->sock[i].sport || a->sock[i].dport != b->sock[i].dport;
        CHECK_EQ_I(sdiff, 0);
        ok &= diff == 0 && sdiff == 0;
    }
    return ok;
}

static void diff_dir(const char *dir, uint64_t want_events)
{
    lp_ktrace *bt = rd(dir, "babeltrace"), *dd = rd(dir, "direct");
    if (bt && want_events)
        CHECK_EQ_I(bt->host[0].nev, want_events);
    printf("%s: %s (%llu events)\n", dir, same(dir, bt, dd) ? "identical" : "DIFFERENT",
           bt ? (unsigned long long)bt->host[0].nev : 0ULL);
    lp_ktrace_free(bt);
    lp_ktrace_free(dd);
}

/* kgen's CTF writer: the events of `kt`'s first host (at most `max`, 0 = all) */
static int write_kgen(const lp_ktrace *kt, const char *dir, uint64_t max)
{
    const lp_khost *h = &kt->host[0];
    kctfw *w = kctfw_open(dir, KS(kt, h->name), h->ncpus);
    if (!w)
        return -1;
    int rc = 0;
    for (uint64_t i = 0; i < h->nev && (!max || i < max) && !rc; i++)
        rc = kctfw_event(w, kt, &h->ev[i]);
    uint64_t bytes;
    if (kctfw_close(w, &bytes))
        rc = -1;
    return rc;
}

static void rm_dir(const char *dir)
{
    char p[800];
    snprintf(p, sizeof p, "%s/metadata", dir);
    unlink(p);
    for (int i = 0; i < 64; i++) {
        snprintf(p, sizeof p, "%s/channel0_%d", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

int main(void)
{
    struct stat sb;
    if (stat(DATA "/scp_src", &sb) != 0 || stat(DATA "/many-threads", &sb) != 0) {
        printf("skip: %s is absent\n", DATA);
        return 77;
    }
    if (!lp_ktrace_have_babeltrace()) {
        printf("skip: built without libbabeltrace2, nothing to compare the direct decoder with\n");
        return 77;
    }
    lp_diags_init(&DS, 10);
    diff_dir(DATA "/scp_src", 110771);
    diff_dir(DATA "/scp_dest", 85729);
    diff_dir(DATA "/many-threads", 240644);

    char tmp[] = "/tmp/lp-ctfdiff-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const char *src[] = {"scp_src", "many-threads"};
    for (int i = 0; i < 2; i++) {
        char in[600], out[700];
        snprintf(in, sizeof in, "%s/%s", DATA, src[i]);
        lp_ktrace *kt = rd(in, "babeltrace");
        if (!kt)
            continue;
        uint64_t cuts[] = {0, 3000};
        for (int c = 0; c < 2; c++) {
            snprintf(out, sizeof out, "%s/%s-%llu", tmp, src[i], (unsigned long long)cuts[c]);
            CHECK(write_kgen(kt, out, cuts[c]) == 0);
            diff_dir(out, 0);
            rm_dir(out);
        }
        lp_ktrace_free(kt);
    }
    rmdir(tmp);
    lp_diags_release(&DS);
    return t_done("test_ctfdiff");
}
