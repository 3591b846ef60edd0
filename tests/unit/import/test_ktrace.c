/* test_ktrace.c: LTTng CTF traces read by the default decoder (the direct one,
 * src/import/kernel/ctf_pkt.c; test_ctfdiff.c compares it with libbabeltrace2's) on the
 * real traces of ../shared/data/ctf (skipped, with a message, when absent):
 * every event of every stream (babeltrace2's own muxer stops at 11,682 of scp_src's
 * 110,771), host names, CPUs, reordered/lost/bad counts, threads, event types; the 46
 * packets Trace Compass's MatchAndSyncTest matches and the clock correction of its
 * ExperimentSyncTest; and bad input (copies under /tmp): truncated and corrupt stream
 * files, missing or garbage metadata, a directory that is not CTF, an event class
 * lacking a field - each a clear error or a counted diagnostic, never a crash. */
#include "longpole/import/kernel.h"
#include "t.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA LP_SOURCE_DIR "/../shared/data/ctf"

/* Trace Compass ExperimentSyncTest: scp_src's transform onto scp_dest's clock */
#define TC_SLOPE 0.9999413783703139011056845831168394L
#define TC_OFFSET 79796507913179.33347660124688298171L

static lp_diags DS;

static lp_status rd(const char *const *paths, size_t n, lp_ktrace **kt, lp_error *err)
{
    lp_diags_release(&DS);
    lp_diags_init(&DS, 50);
    return lp_ktrace_read(paths, n, &DS, kt, err);
}

static const char *S(const lp_ktrace *kt, lp_str s) { return s == LP_STR_NONE ? "(none)" : lp_strtab_get(&kt->strs, s); }

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Distinct threads: the tids of sched_switch (prev, next), wake-ups, fork (parent,
 * child), exec/exit/free, statedump, and every event's ctx_tid. */
static uint64_t threads(const lp_khost *h)
{
    int32_t *t = malloc((h->nev * 3 + 1) * sizeof *t);
    size_t n = 0;
    for (uint64_t i = 0; i < h->nev; i++) {
        const lp_kev *e = &h->ev[i];
        if (e->type <= LP_KEV_STATEDUMP_PROCESS && e->tid >= 0)
            t[n++] = e->tid;
        if ((e->type == LP_KEV_SCHED_SWITCH || e->type == LP_KEV_PROCESS_FORK) && e->tid2 >= 0)
            t[n++] = e->tid2;
        if (e->ctx_tid >= 0)
            t[n++] = e->ctx_tid;
    }
    qsort(t, n, sizeof *t, cmp_i32);
    uint64_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += i == 0 || t[i] != t[i - 1];
    free(t);
    return d;
}

static void check_host_invariants(const lp_khost *h)
{
    uint64_t unsorted = 0, badcpu = 0, noctx = 0;
    for (uint64_t i = 0; i < h->nev; i++) {
        unsorted += i && h->ev[i - 1].ts > h->ev[i].ts;
        badcpu += h->ev[i].cpu >= h->ncpus;
        noctx += h->ev[i].ctx_tid < 0;
    }
    CHECK_EQ_I(unsorted, 0);
    CHECK_EQ_I(badcpu, 0);
    CHECK_EQ_I(noctx, 0);
}

static uint64_t count_type(const lp_khost *h, lp_kev_type t)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < h->nev; i++)
        n += h->ev[i].type == t;
    return n;
}

static void test_scp(void)
{
    const char *p[] = {DATA "/scp_dest", DATA "/scp_src"};
    lp_ktrace *kt;
    lp_error err;
    lp_status st = rd(p, 2, &kt, &err);
    CHECK(st == LP_OK);
    if (st) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    CHECK_EQ_I(kt->nhosts, 2);
    const lp_khost *d = &kt->host[0], *s = &kt->host[1];
    CHECK_STR(S(kt, d->name), "VM3");
    CHECK_STR(S(kt, s->name), "VM1");
    /* every event of the stream, not babeltrace2's 11,682; the unused ones without a
     * context (no LTTng tid context here) not kept but counted */
    CHECK_EQ_I(s->nev + s->ndropped, 110771);
    CHECK_EQ_I(d->nev + d->ndropped, 85729);
    CHECK_EQ_I(s->ndropped, 110771 - 65896);
    CHECK(s->nother >= s->ndropped && d->ndropped > 0);
    {   /* LP_KREAD_ALL keeps them: the default read is that minus the unused events inside
         * the stream (one stream), each switch after some carrying the last one's stamp */
        const char *one[] = {DATA "/scp_src"};
        lp_ktrace *all = NULL;
        CHECK(lp_ktrace_read_flags(one, 1, LP_KREAD_ALL, NULL, &all, &err) == LP_OK);
        const lp_khost *A = all ? &all->host[0] : NULL;
        CHECK(A && A->nev == 110771 && A->ndropped == 0 && A->nother == s->nother);
        uint64_t j = 0, bad = 0, prevs = 0;
        int64_t pend = INT64_MIN;
        for (uint64_t i = 0; A && i < A->nev; i++) {
            const lp_kev *e = &A->ev[i];
            if (e->type == LP_KEV_OTHER && i > 0 && i + 1 < A->nev) {
                pend = e->ts;
                continue;
            }
            const lp_kev *k = j < s->nev ? &s->ev[j++] : NULL;
            int want_prev = e->type == LP_KEV_SCHED_SWITCH && pend != INT64_MIN;
            prevs += want_prev;
            if (!k || k->ts != e->ts || k->type != e->type || k->tid != e->tid || k->ctx_tid != e->ctx_tid ||
                !!(k->kfl & LP_KEVF_PREV) != want_prev || (want_prev && k->b != pend))
                bad++;
            pend = INT64_MIN;
        }
        CHECK_EQ_I(bad, 0);
        CHECK_EQ_I(j, s->nev);
        CHECK(prevs > 0);
        lp_ktrace_free(all);
    }
    CHECK_EQ_I(s->ncpus, 1);
    CHECK_EQ_I(d->ncpus, 1);
    CHECK_EQ_I(s->nstreams, 1);
    CHECK_EQ_I(s->nreordered, 0); /* the step back is a packet's begin time, not an event's */
    CHECK_EQ_I(d->nreordered, 0);
    CHECK_EQ_I(s->nlost, 0);
    CHECK_EQ_I(s->nbad, 0);
    CHECK_EQ_I(d->nbad, 0);
    CHECK_EQ_I(DS.nerrors + DS.nwarnings, 0);
    CHECK_EQ_I(threads(s), 79);
    CHECK_EQ_I(threads(d), 92);
    check_host_invariants(s);
    check_host_invariants(d);
    /* old event names: sched_wakeup (no sched_waking), softirq_* */
    CHECK_EQ_I(count_type(s, LP_KEV_SCHED_SWITCH), 594);
    CHECK_EQ_I(count_type(s, LP_KEV_SCHED_WAKEUP), 471);
    CHECK_EQ_I(count_type(s, LP_KEV_SCHED_WAKING), 0);
    CHECK_EQ_I(count_type(s, LP_KEV_SOFTIRQ_ENTRY), 7216);
    CHECK_EQ_I(count_type(s, LP_KEV_HRTIMER_ENTRY), 6911);
    CHECK_EQ_I(count_type(s, LP_KEV_NET_SEND), 26);
    CHECK_EQ_I(count_type(s, LP_KEV_NET_RECV), 25);
    CHECK_EQ_I(s->nother, 44876);
    CHECK(s->bytes > 2000000);
    /* the connection: scp's inet_connect on VM1, sshd's accept on VM3 (10.0.10.4 -> 10.0.10.21:22) */
    const lp_ksock *ks = NULL;
    for (uint64_t i = 0; i < s->nev && !ks; i++)
        if (s->ev[i].type == LP_KEV_NET_SEND && s->ev[i].a == 2769203724LL)
            ks = lp_khost_sock(s, s->ev[i].key, s->ev[i].ts);
    CHECK(ks && ks->saddr == 0x0a000a04u && ks->daddr == 0x0a000a15u && ks->dport == 22 && ks->sport == 48361);
    CHECK(d->nsock >= 1 && d->sock[d->nsock - 1].sport == 22 && d->sock[d->nsock - 1].daddr == 0x0a000a04u);

    /* packets and clocks (Trace Compass: 46 matches; scp_src's transform) */
    lp_kmatch m;
    st = lp_kmatch_run(kt, &m, &err);
    CHECK(st == LP_OK);
    if (!st) {
        CHECK_EQ_I(m.npk, 46);
        CHECK_EQ_I(m.nunmatched_send, 3);
        CHECK_EQ_I(m.nunmatched_recv, 5);
        const lp_kclock *c = &m.clock[1];
        CHECK_EQ_I(m.clock[0].quality, LP_KCLOCK_REFERENCE);
        CHECK_EQ_I(c->quality, LP_KCLOCK_ACCURATE);
        CHECK_EQ_I(c->npackets, 46);
        CHECK(fabsl(c->slope - TC_SLOPE) < 1e-6L);
        CHECK(fabsl(c->slope - TC_SLOPE) < 1e-15L); /* in fact the same extreme lines */
        CHECK(c->offset >= c->offset_lo && c->offset <= c->offset_hi);
        CHECK(TC_OFFSET >= c->offset_lo && TC_OFFSET <= c->offset_hi);
        CHECK(fabsl(c->offset - TC_OFFSET) < 1.0L);
        CHECK(c->slope_lo < c->slope && c->slope < c->slope_hi);
        fprintf(stderr, "scp_src -> scp_dest: slope %.16f (TC %.16Lf), offset %.3f ns (TC %.3Lf; allowed [%.3f, %.3f])\n",
                c->slope, TC_SLOPE, c->offset, TC_OFFSET, c->offset_lo, c->offset_hi);
        /* every packet is causal once corrected, and apply() agrees with slope * t + offset */
        uint64_t acausal = 0;
        for (uint64_t i = 0; i < m.npk; i++) {
            const lp_kpacket *k = &m.pk[i];
            int64_t ts = lp_kclock_apply(&m.clock[k->shost], kt->host[k->shost].ev[k->sev].ts);
            int64_t tr = lp_kclock_apply(&m.clock[k->rhost], kt->host[k->rhost].ev[k->rev].ts);
            acausal += tr < ts;
            CHECK(k->shost != k->rhost);
        }
        CHECK_EQ_I(acausal, 0);
        int64_t t = s->ev[s->nev / 2].ts;
        long double exact = (long double)TC_SLOPE * t + (long double)TC_OFFSET;
        CHECK(fabsl((long double)lp_kclock_apply(c, t) - exact) < 2.0L);
        lp_kmatch_release(&m);
    }
    lp_ktrace_free(kt);

    /* the other order: scp_src is the reference; still 46 packets, causal after sync */
    const char *q[] = {DATA "/scp_src", DATA "/scp_dest"};
    st = rd(q, 2, &kt, &err);
    CHECK(st == LP_OK);
    if (st)
        return;
    st = lp_kmatch_run(kt, &m, &err);
    CHECK(st == LP_OK);
    if (!st) {
        CHECK_EQ_I(m.npk, 46);
        CHECK(fabsl(m.clock[1].slope * TC_SLOPE - 1) < 1e-5L); /* the inverse, up to the middle's choice */
        for (uint64_t i = 0; i < m.npk; i++) {
            const lp_kpacket *k = &m.pk[i];
            CHECK(lp_kclock_apply(&m.clock[k->rhost], kt->host[k->rhost].ev[k->rev].ts) >=
                  lp_kclock_apply(&m.clock[k->shost], kt->host[k->shost].ev[k->sev].ts));
        }
        lp_kmatch_release(&m);
    }
    lp_ktrace_free(kt);
}

static void test_many_threads(void)
{
    const char *p[] = {DATA "/many-threads"};
    lp_ktrace *kt;
    lp_error err;
    lp_status st = rd(p, 1, &kt, &err);
    CHECK(st == LP_OK);
    if (st) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const lp_khost *h = &kt->host[0];
    CHECK_STR(S(kt, h->name), "wilbrod");
    CHECK_EQ_I(h->nev + h->ndropped, 240644);
    CHECK_EQ_I(h->ncpus, 8);
    CHECK_EQ_I(h->nstreams, 8);
    CHECK_EQ_I(h->nreordered, 0);
    CHECK_EQ_I(h->nlost, 0);
    CHECK_EQ_I(h->nbad, 0);
    check_host_invariants(h);
    /* new event names: sched_waking, irq_softirq_*; syscalls by name */
    CHECK_EQ_I(count_type(h, LP_KEV_SCHED_SWITCH), 28325);
    CHECK_EQ_I(count_type(h, LP_KEV_SCHED_WAKING), 6743);
    CHECK_EQ_I(count_type(h, LP_KEV_SCHED_WAKEUP), 6743);
    CHECK_EQ_I(count_type(h, LP_KEV_PROCESS_FORK), 8003);
    CHECK_EQ_I(count_type(h, LP_KEV_PROCESS_FREE), 7639);
    CHECK_EQ_I(count_type(h, LP_KEV_SOFTIRQ_RAISE), 6042);
    CHECK_EQ_I(count_type(h, LP_KEV_STATEDUMP_PROCESS), 581);
    CHECK_EQ_I(count_type(h, LP_KEV_SYSCALL_ENTRY), 78085);
    CHECK_EQ_I(count_type(h, LP_KEV_SYSCALL_EXIT), 78086);
    CHECK_EQ_I(threads(h), 8587);
    /* prev_state 2048 (Linux 4.4's "preempted" bit) is kept raw */
    uint64_t n2048 = 0;
    for (uint64_t i = 0; i < h->nev; i++)
        n2048 += h->ev[i].type == LP_KEV_SCHED_SWITCH && (h->ev[i].a & 2048);
    CHECK(n2048 > 0);
    /* fork: the new LTTng fields child_pid */
    for (uint64_t i = 0; i < h->nev; i++)
        if (h->ev[i].type == LP_KEV_PROCESS_FORK && h->ev[i].ts == 1457113582815129067LL) {
            CHECK_EQ_I(h->ev[i].tid, 2673);
            CHECK_EQ_I(h->ev[i].tid2, 2674);
            CHECK_EQ_I(h->ev[i].a, 2673);
            CHECK_STR(S(kt, h->ev[i].name), "multithread");
        }
    lp_ktrace_free(kt);
}

/* ---- bad input, on copies -------------------------------------------------------------- */

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int ok = a && b;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0)
        ok = fwrite(buf, 1, n, b) == n;
    if (a)
        fclose(a);
    if (b && fclose(b))
        ok = 0;
    return ok;
}

static char tmp[256];

static const char *mk(const char *name, int with_meta, int with_stream)
{
    static char d[512];
    snprintf(d, sizeof d, "%s/%s", tmp, name);
    mkdir(d, 0700);
    char p[600];
    if (with_meta) {
        snprintf(p, sizeof p, "%s/metadata", d);
        CHECK(copy_file(DATA "/scp_src/metadata", p));
    }
    if (with_stream) {
        snprintf(p, sizeof p, "%s/channel0_0", d);
        CHECK(copy_file(DATA "/scp_src/channel0_0", p));
    }
    return d;
}

static lp_status rd1(const char *dir, lp_ktrace **kt, lp_error *err)
{
    const char *p[] = {dir};
    *kt = NULL;
    return rd(p, 1, kt, err);
}

static void test_bad(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/lp-ktrace-XXXXXX");
    if (!mkdtemp(tmp)) {
        CHECK(0);
        return;
    }
    lp_ktrace *kt;
    lp_error err;
    char p[600];

    /* a stream file cut in the middle of a packet: a clear error naming it */
    const char *d = mk("trunc", 1, 1);
    snprintf(p, sizeof p, "%s/channel0_0", d);
    CHECK(truncate(p, 1000000) == 0);
    CHECK(rd1(d, &kt, &err) == LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "channel0_0") != NULL);
    CHECK(kt == NULL);

    /* bytes overwritten in the middle of a stream: stops with the file and the position */
    d = mk("corrupt", 1, 1);
    snprintf(p, sizeof p, "%s/channel0_0", d);
    FILE *f = fopen(p, "r+b");
    CHECK(f != NULL);
    if (f) {
        static unsigned char ff[3000];
        memset(ff, 0xff, sizeof ff);
        fseek(f, 500000, SEEK_SET);
        fwrite(ff, 1, sizeof ff, f);
        fclose(f);
    }
    CHECK(rd1(d, &kt, &err) == LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "channel0_0") && strstr(err.msg, "decoding stopped after its event 22781"));

    /* no metadata: not CTF (the stream alone is not read as text either) */
    d = mk("nometa", 0, 1);
    CHECK(rd1(d, &kt, &err) == LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "no 'metadata'") != NULL);

    /* a directory of other files */
    d = mk("notctf", 0, 0);
    snprintf(p, sizeof p, "%s/readme.txt", d);
    f = fopen(p, "w");
    if (f) {
        fputs("hello\n", f);
        fclose(f);
    }
    CHECK(rd1(d, &kt, &err) == LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "not a CTF trace") != NULL);

    /* garbage metadata */
    d = mk("garbage", 0, 1);
    snprintf(p, sizeof p, "%s/metadata", d);
    f = fopen(p, "w");
    if (f) {
        fputs("this is not TSDL {\n", f);
        fclose(f);
    }
    CHECK(rd1(d, &kt, &err) == LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "neither CTF text") != NULL);

    /* an event class without a field its mapping needs: counted, reported once, the
     * other events read */
    d = mk("field", 0, 1);
    snprintf(p, sizeof p, "%s/metadata", d);
    FILE *in = fopen(DATA "/scp_src/metadata", "rb"), *out = fopen(p, "wb");
    CHECK(in && out);
    if (in && out) {
        static char text[65536];
        size_t n = fread(text, 1, sizeof text - 1, in);
        text[n] = '\0';
        char *x = NULL; /* packetized metadata: text between binary headers */
        for (size_t i = 0; i + 10 <= n && !x; i++)
            if (memcmp(text + i, "_prev_tid;", 10) == 0)
                x = text + i;
        CHECK(x != NULL);
        if (x)
            x[8] = 'X'; /* _prev_tiX */
        fwrite(text, 1, n, out);
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    CHECK(rd1(d, &kt, &err) == LP_OK);
    if (kt) {
        CHECK_EQ_I(kt->host[0].nbad, 594);
        CHECK_EQ_I(kt->host[0].nev + kt->host[0].ndropped, 110771 - 594);
        CHECK_EQ_I(DS.count[LP_RULE_FIELD], 1);
        CHECK(DS.nkept == 1 && strstr(DS.kept[0].msg, "sched_switch") && strstr(DS.kept[0].msg, "prev_tid"));
        CHECK(DS.nkept == 1 && strstr(DS.kept[0].file, "field"));
        lp_ktrace_free(kt);
    }

    /* a missing path; a metadata file given directly reads its directory */
    CHECK(rd1("/nonexistent/trace", &kt, &err) == LP_ERR_IO);
    CHECK(rd1(DATA "/scp_dest/metadata", &kt, &err) == LP_OK);
    if (kt) {
        CHECK_EQ_I(kt->host[0].nev + kt->host[0].ndropped, 85729);
        lp_ktrace_free(kt);
    }
    /* a directory holding traces: each is a host, in name order */
    CHECK(rd1(DATA, &kt, &err) == LP_OK);
    if (kt) {
        CHECK_EQ_I(kt->nhosts, 3);
        CHECK_STR(S(kt, kt->host[0].name), "wilbrod");
        CHECK_STR(S(kt, kt->host[2].name), "VM1");
        lp_ktrace_free(kt);
    }
    CHECK_EQ_I(lp_ktrace_detect(DATA "/scp_src"), LP_KFORMAT_CTF);
    CHECK_EQ_I(lp_ktrace_detect(DATA), LP_KFORMAT_NONE);

    const char *names[] = {"trunc", "corrupt", "nometa", "notctf", "garbage", "field"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *files[] = {"metadata", "channel0_0", "readme.txt"};
        for (size_t j = 0; j < 3; j++) {
            snprintf(p, sizeof p, "%s/%s/%s", tmp, names[i], files[j]);
            unlink(p);
        }
        snprintf(p, sizeof p, "%s/%s", tmp, names[i]);
        rmdir(p);
    }
    rmdir(tmp);
}

int main(void)
{
    lp_diags_init(&DS, 50);
    struct stat sb;
    if (!lp_ktrace_have_ctf()) {
        /* without libbabeltrace2: a clear error, whatever the data */
        const char *p[] = {LP_SOURCE_DIR};
        char d[] = "/tmp/lp-noctf-XXXXXX";
        CHECK(mkdtemp(d) != NULL);
        char m[64];
        snprintf(m, sizeof m, "%s/metadata", d);
        FILE *f = fopen(m, "w");
        if (f)
            fclose(f);
        p[0] = d;
        lp_ktrace *kt;
        lp_error err;
        CHECK(rd(p, 1, &kt, &err) == LP_ERR_UNSUPPORTED);
        CHECK(strstr(err.msg, "built without CTF support") != NULL);
        unlink(m);
        rmdir(d);
        lp_diags_release(&DS);
        return t_done("test_ktrace (no CTF support)");
    }
    if (stat(DATA "/scp_src/metadata", &sb) != 0 || stat(DATA "/many-threads/metadata", &sb) != 0) {
        fprintf(stderr, "test_ktrace: SKIP: %s is absent\n", DATA);
        lp_diags_release(&DS);
        return 77;
    }
    test_scp();
    test_many_threads();
    test_bad();
    lp_diags_release(&DS);
    return t_done("test_ktrace");
}
