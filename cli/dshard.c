/* dshard.c: the run, agreeing on failure, the gather and the --stats block of the
 * sharded `dist` commands (dshard.h). Invariant: every function here but dshard_root is
 * a collective: every rank calls it, in the same order, even after its own failure. */
#include "dshard.h"

#include <string.h>

const cli_opt dshard_opts[] = {
    {"--stats", .kind = CLI_FLAG, CLI_AT(dshard_opt, stats),
     .help = "also print on stderr what each rank sent and received (messages,\n"
             "bytes) and its CPU seconds; stdout stays the command's"},
    CLI_END,
};

static void init(dshard *s, cli_dist *D, const char *cmd, int argc, char **argv)
{
    memset(s, 0, sizeof *s);
    s->D = D;
    s->d = D->d;
    s->cmd = cmd;
    s->rank = D->rank;
    s->size = D->size;
    s->inputs = argv + 1;
    s->ninputs = argc - 1;
}

int dshard_run(cli_dist *D, const char *cmd, int (*main)(int argc, char **argv, dshard *s), int argc, char **argv)
{
    dshard s;
    init(&s, D, cmd, argc, argv);
    int rc = main(argc, argv, &s);
    dshard_stats(&s);
    lp_free(s.buf), lp_free(s.all), lp_free(s.lens), lp_free(s.base), lp_free(s.off), lp_free(s.words);
    return rc;
}

int dshard_parse(dshard *sh, const cli_spec *one, const cli_spec *dist, int argc, char **argv, void *args,
                 cli_args *a)
{
    return sh ? cli_dist_parse(sh->D, dist, argc, argv, args, a) : cli_parse(one, argc, argv, args, a);
}

int dshard_agree(dshard *s, int rc)
{
    int first, out = cli_dist_agree(s->D, rc, &first);
    if (rc) { /* one write: the ranks' lines do not interleave */
        char msg[1024];
        size_t n = (size_t)snprintf(msg, sizeof msg, "longpole dist %s: rank %d of %d failed (exit status %d); its "
                                    "arguments:", s->cmd, s->rank, s->size, rc);
        for (int i = 0; i < s->ninputs && n < sizeof msg; i++)
            n += (size_t)snprintf(msg + n, sizeof msg - n, " %s", s->inputs[i]);
        fprintf(stderr, "%s\n", msg);
    } else if (first >= 0 && s->rank == 0) {
        fprintf(stderr, "longpole dist %s: stopped: rank %d failed (exit status %d; its message above)\n", s->cmd,
                first, out);
    }
    return out;
}

lp_status dshard_settle(dshard *s, lp_status st, lp_error *err)
{
    int first = dshard_agree(s, st ? cli_exit_for(st) : 0);
    if (st)
        return st;
    return first ? lp_error_set(err, LP_ERR_IO, "another rank failed") : LP_OK;
}

lp_status dshard_gather(dshard *s, lp_error *err)
{
    size_t K = (size_t)s->size, dummy[1];
    if (s->rank == 0) {
        s->lens = lp_calloc(K, sizeof *s->lens);
        s->base = lp_calloc(K, sizeof *s->base);
        s->off = lp_calloc(K, sizeof *s->off);
    }
    int nomem = s->rank == 0 && (!s->lens || !s->base || !s->off);
    void *all = NULL; /* the gather must still happen */
    lp_status st = lp_dist_gather(s->d, 0, s->buf, s->len, &all, nomem ? dummy : s->lens, err);
    s->all = all;
    if (!st && nomem)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t r = 1; !st && s->rank == 0 && r < K; r++)
        s->base[r] = s->base[r - 1] + s->lens[r - 1];
    return st;
}

uint64_t dshard_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

int dshard_same(dshard *s, uint64_t fingerprint, const char *what)
{
    uint64_t *w = lp_calloc((size_t)s->size, sizeof *w);
    lp_error err;
    if (!w)
        return LP_EXIT_NOMEM;
    w[s->rank] = fingerprint;
    if (lp_dist_allreduce_u64(s->d, w, (size_t)s->size, LP_DIST_SUM, &err)) {
        lp_free(w);
        fprintf(stderr, "longpole dist %s: rank %d: %s\n", s->cmd, s->rank, err.msg);
        return LP_EXIT_IO;
    }
    int differ = 0;
    for (int r = 1; r < s->size; r++)
        differ += w[r] != w[0];
    if (differ && w[s->rank] != w[0]) {
        char msg[1024];
        size_t n = (size_t)snprintf(msg, sizeof msg, "longpole dist %s: rank %d of %d loaded other input than rank 0 "
                                    "(%s differ); every rank must read the same inputs; its arguments:",
                                    s->cmd, s->rank, s->size, what);
        for (int i = 0; i < s->ninputs && n < sizeof msg; i++)
            n += (size_t)snprintf(msg + n, sizeof msg - n, " %s", s->inputs[i]);
        fprintf(stderr, "%s\n", msg);
    } else if (differ && s->rank == 0) {
        fprintf(stderr, "longpole dist %s: stopped: %d rank(s) loaded other input than rank 0 (%s differ)\n", s->cmd,
                differ, what);
    }
    lp_free(w);
    return differ ? LP_EXIT_DATA : 0;
}

void dshard_stats(dshard *s)
{
    lp_dist_counters *all = s->rank == 0 ? lp_calloc((size_t)s->size, sizeof *all) : NULL;
    uint64_t *cpu = lp_calloc((size_t)s->size, sizeof *cpu);
    lp_error err;
    int ok = cpu && (s->rank != 0 || all);
    /* both collectives run on every rank, whatever happened */
    if (cpu)
        cpu[s->rank] = (uint64_t)(lp_dist_cpu_seconds() * 1e6);
    lp_status st = lp_dist_counters_gather(s->d, 0, all, &err);
    uint64_t dummy = 0;
    lp_status st2 = lp_dist_allreduce_u64(s->d, cpu ? cpu : &dummy, cpu ? (size_t)s->size : 1, LP_DIST_SUM, &err);
    if (ok && !st && !st2 && s->rank == 0 && s->stats) {
        uint64_t msgs = 0, bytes = 0;
        fprintf(stderr, "distribution (%s transport, %d ranks):\n  %4s %10s %14s %10s %14s %9s\n",
                lp_dist_name(s->d), s->size, "rank", "msgs sent", "bytes sent", "msgs recv", "bytes recv", "CPU s");
        for (int r = 0; r < s->size; r++) {
            fprintf(stderr, "  %4d %10llu %14llu %10llu %14llu %9.3f\n", r, (unsigned long long)all[r].msgs_sent,
                    (unsigned long long)all[r].bytes_sent, (unsigned long long)all[r].msgs_recv,
                    (unsigned long long)all[r].bytes_recv, (double)cpu[r] / 1e6);
            msgs += all[r].msgs_sent;
            bytes += all[r].bytes_sent;
        }
        fprintf(stderr, "  total: %llu messages, %llu bytes sent\n", (unsigned long long)msgs,
                (unsigned long long)bytes);
    }
    lp_free(all);
    lp_free(cpu);
}
