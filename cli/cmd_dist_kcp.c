/* cmd_dist_kcp.c: `longpole dist kcp`: the critical path of one thread of kernel
 * traces (one trace per host) over the ranks of an MPI job (docs/distributed.md; the
 * distributed critical path paper, papers/distributed-critical-path-eci.txt §III-V):
 *  - AL1: rank 0 reads every trace and computes the path as `cp --thread` does (the
 *    traces must be readable at rank 0); the other ranks do nothing;
 *  - AL2, AL3: every rank reads its own hosts (host i: rank i mod K) and builds their
 *    graphs and ECIs (dkcp_setup.c); rank 0 computes the path on the hosts it needs,
 *    asking for each host the path depends on: AL2 by broadcasting the dependency to
 *    every rank, AL3 by asking the rank the merged ECI names (dkcp_query.c).
 * The text and JSON printed are `cp --thread`'s on the same traces, byte for byte;
 * --stats adds, after them and apart, what moved (a text block, or a second JSON
 * document on its own line).
 */
#include "dkcp.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct dkcp_args {
    const char *thread, *host, *from, *to, *index;
    int unbounded, no_sync, json, quiet, stats, algo, verify;
    uint64_t path_limit, top, max_diags;
} dkcp_args;

static void dkcp_init(void *p)
{
    dkcp_args *a = p;
    a->path_limit = 40;
    a->top = 10;
    a->algo = DK_AL3;
}

static int parse_path(void *dst, const char *v, char *msg, size_t n)
{
    (void)msg, (void)n;
    if (strcmp(v, "all") == 0) {
        *(uint64_t *)dst = 0;
        return 0;
    }
    return cli_parse_count(v, dst);
}

static const char *const algos[] = {"al1", "al2", "al3", NULL};

static const cli_opt dkcp_opts[] = {
    {"--thread", .kind = CLI_STR, .arg = "TID|NAME", CLI_AT(dkcp_args, thread), .err = "--thread needs a thread",
     .example = "7421", .help = "the thread: a tid, a command name, or host/comm-tid (as `cp --thread`)"},
    {"--host", .kind = CLI_STR, .arg = "H", CLI_AT(dkcp_args, host), .err = "--host needs a host name",
     .example = "VM1", .help = "look for the thread on host H only"},
    {"--from", .kind = CLI_TIME, .arg = "T", CLI_AT(dkcp_args, from), .err = "--from needs a time", .example = "+1ms",
     .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", CLI_AT(dkcp_args, to), .err = "--to needs a time", .example = "+2s",
     .help = "the query interval, as `cp --thread`"},
    {"--unbounded", .kind = CLI_FLAG, CLI_AT(dkcp_args, unbounded), .help = "the unbounded path (as `cp --thread`)"},
    {"--no-sync", .kind = CLI_FLAG, CLI_AT(dkcp_args, no_sync), .help = "keep every host's own clock"},
    {"--algo", .kind = CLI_CHOICE, .arg = "al1|al2|al3", CLI_AT(dkcp_args, algo), .choices = algos,
     .err = "--algo needs al1, al2 or al3", .example = "al2",
     .help = "al1: rank 0 reads every trace; al2: ranks read their hosts, rank 0\n"
             "broadcasts each dependency; al3 (default): asks only the rank the ECI names"},
    {"--index", .kind = CLI_STR, .arg = "DIR", CLI_AT(dkcp_args, index), .err = "--index needs a directory",
     .example = "idx",
     .help = "keep each rank's graph in DIR on its node (rankR-of-K.lpkx and .lpkx.dk) as\n"
             "`cp --thread --index` keeps one: later queries map it instead of reading\n"
             "the traces; built if absent, rebuilt if another host's trace changed; a\n"
             "stale or foreign one is refused (exit 8), a corrupt one too (exit 5);\n"
             "al1: rank 0 uses DIR/al1.lpkx exactly as `cp --thread --index`"},
    {"--verify", .kind = CLI_FLAG, CLI_AT(dkcp_args, verify),
     .help = "with --index: check every byte of each index even when its verification\n"
             "stamp vouches for it (as `cp --thread --verify`)"},
    {"--json", .kind = CLI_FLAG, CLI_AT(dkcp_args, json), .help = "one JSON document (docs/formats/kcp-json.md)"},
    {"--path", .kind = CLI_FN, .arg = "N|all", CLI_AT(dkcp_args, path_limit), .fn = parse_path,
     .err = "--path needs a number or 'all'", .example = "all", .help = "path rows to print (default 40)"},
    {"--top", .kind = CLI_COUNT, .arg = "N", CLI_AT(dkcp_args, top), .err = "--top needs a number", .example = "3",
     .help = "rows per breakdown (default 10, 0 = all)"},
    {"--stats", .kind = CLI_FLAG, CLI_AT(dkcp_args, stats),
     .help = "then what moved: messages, bytes, requests and CPU seconds per rank, wall\n"
             "time (a text block; with --json a second JSON document on its own line)"},
    {"-q", "--quiet", .kind = CLI_FLAG, CLI_AT(dkcp_args, quiet), .help = "print only the counts of the input's diagnostics"},
    {"--max-errors", .kind = CLI_COUNT, .arg = "N", CLI_AT(dkcp_args, max_diags), .err = "--max-errors needs a number",
     .example = "5", .help = "diagnostics printed in full (default 20)"},
    CLI_END,
};

const cli_spec cli_spec_dist_kcp = {
    .cmd = "dist kcp",
    .usage = NULL,
    .about = "\nusage: mpirun -n K longpole dist kcp --thread TID|NAME [OPTIONS] TRACE...\n"
             "`cp --thread` over the ranks of an MPI job: one kernel trace per host, host i\n"
             "read by rank i mod K; the answer printed by rank 0 is `cp --thread`'s.\n",
    .groups = {CLI_OWN("options of dist kcp:", dkcp_opts)},
    .size = sizeof(dkcp_args),
    .init = dkcp_init,
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One rank's figures, gathered at rank 0 for --stats. */
typedef struct dk_rank {
    lp_dist_counters setup, query;
    double cpu_setup, cpu_query, cpu_eci;
    uint64_t served, hosts, idx;
} dk_rank;

typedef struct dk_run {
    dkcp k;
    const dkcp_args *a;
    dk_rank me, *all;  /* all: [size] at rank 0 */
    double wall_setup, wall_query;
    uint64_t input_bytes; /* AL1: the traces rank 0 read */
    int diag_errors;
} dk_run;

/* Print the answer as `cp --thread` does, from the graph of the hosts rank 0 has with
 * the whole graph's figures. */
static void print_answer(dk_run *R, lp_kgraph *g, cli_kquery *q, const cli_kout *o)
{
    dkcp *k = &R->k;
    cli_kgraph kg;
    memset(&kg, 0, sizeof kg);
    kg.g = g;
    kg.host = lp_calloc(k->nh, sizeof *kg.host);
    if (!kg.host) {
        cli_dist_err(k->D, "out of memory");
        return;
    }
    for (uint32_t h = 0; h < k->nh; h++) {
        const lp_khost *H = &k->skel->host[h];
        cli_khost *x = &kg.host[h];
        x->name = lp_strtab_get(&k->skel->strs, H->name);
        x->source = H->source == LP_STR_NONE ? "" : lp_strtab_get(&k->skel->strs, H->source);
        x->nev = k->nev_read[h], x->nreordered = H->nreordered, x->nlost = H->nlost, x->nbad = H->nbad;
        x->nother = H->nother, x->nsock = H->nsock, x->bytes = H->bytes, x->ncpus = H->ncpus;
        x->nstreams = H->nstreams;
        x->nchunks = H->nchunks;
    }
    kg.nhosts_read = k->nh;
    kg.m = k->m;
    kg.have_match = 1;
    kg.no_sync = k->no_sync;
    kg.diag_errors = k->tot.diag_errors, kg.diag_warnings = k->tot.diag_warnings;
    /* the whole graph's figures in place of the partial graph's, while printing */
    uint32_t nw = g->nworkers, nv = g->nv, nl = g->nlinks;
    uint64_t npk = g->npk;
    lp_kgraph_stats st = g->st;
    g->nworkers = (uint32_t)k->tot.nworkers, g->nv = (uint32_t)k->tot.nv, g->nlinks = (uint32_t)k->tot.nlinks;
    g->npk = k->tot.npk, g->st = k->tot.st;
    if (o->json)
        cli_kcp_json(&kg, q, o);
    else
        cli_kcp_text(&kg, q, o);
    g->nworkers = nw, g->nv = nv, g->nlinks = nl, g->npk = npk, g->st = st;
    lp_free(kg.host);
    R->diag_errors = kg.diag_errors != 0;
}

/* AL1: rank 0 alone, exactly `cp --thread`. */
static int run_al1(dk_run *R, cli_kquery *q, const cli_kout *o)
{
    const dkcp_args *a = R->a;
    char *file = NULL;
    if (a->index) { /* exactly `cp --thread --index DIR/al1.lpkx` */
        size_t len = strlen(a->index) + 16;
        if (!(file = lp_malloc(len))) {
            cli_dist_err(R->k.D, "out of memory");
            return LP_EXIT_NOMEM;
        }
        snprintf(file, len, "%s/al1%s", a->index, LP_KINDEX_EXT);
        if (mkdir(a->index, 0777) != 0 && errno != EEXIST) {
            cli_dist_err(R->k.D, "cannot create the index directory '%s': %s", a->index, strerror(errno));
            lp_free(file);
            return LP_EXIT_IO;
        }
    }
    cli_kload lo = {a->no_sync, file, a->quiet, (size_t)a->max_diags, a->verify};
    cli_kgraph kg;
    int rc = cli_kgraph_load("dist kcp", &lo, R->k.paths, (int)R->k.nh, &kg);
    lp_free(file);
    if (rc)
        return rc;
    for (uint32_t h = 0; h < kg.nhosts_read; h++)
        R->input_bytes += kg.host[h].bytes;
    if (!(rc = cli_kcp_query("dist kcp", a->from, a->to, &kg, q))) {
        if (a->json)
            cli_kcp_json(&kg, q, o);
        else
            cli_kcp_text(&kg, q, o);
    }
    R->diag_errors = kg.diag_errors != 0;
    cli_kgraph_release(&kg);
    return rc;
}

static int run(dk_run *R, cli_kquery *q, const cli_kout *o)
{
    dkcp *k = &R->k;
    cli_dist *D = k->D;
    double w0 = now_s(), c0 = lp_dist_cpu_seconds();
    int rc = 0;
    if (k->algo == DK_AL1) {
        if (D->rank == 0)
            rc = run_al1(R, q, o);
        R->wall_query = now_s() - w0;
        R->me.cpu_query = lp_dist_cpu_seconds() - c0;
        R->me.query = lp_dist_counters_get(D->d);
        return cli_dist_agree(D, rc, NULL);
    }
    rc = dk_setup(k);
    R->wall_setup = now_s() - w0;
    R->me.cpu_setup = lp_dist_cpu_seconds() - c0;
    R->me.setup = lp_dist_counters_get(D->d);
    R->me.cpu_eci = k->cpu_eci;
    R->me.idx = (uint64_t)k->idx;
    lp_dist_counters_reset(D->d);
    if (rc)
        return rc;
    double w1 = now_s(), c1 = lp_dist_cpu_seconds();
    lp_kgraph *g = NULL;
    if (D->rank == 0) {
        rc = dk_query(k, q, R->a->from, R->a->to, &g);
        if (!rc)
            print_answer(R, g, q, o);
    } else {
        rc = dk_serve(k);
    }
    lp_kgraph_free(g);
    R->wall_query = now_s() - w1;
    R->me.cpu_query = lp_dist_cpu_seconds() - c1;
    R->me.query = lp_dist_counters_get(D->d);
    R->me.served = k->nserved;
    return cli_dist_agree(D, rc, NULL);
}

static const char *algo_name(int algo) { return algo == DK_AL1 ? "al1" : algo == DK_AL2 ? "al2" : "al3"; }

static void stats_text(const dk_run *R)
{
    const dkcp *k = &R->k;
    int K = k->D->size;
    uint64_t sm = 0, sb = 0, qm = 0, qb = 0, req = 0;
    for (int r = 0; r < K; r++) {
        sm += R->all[r].setup.msgs_sent, sb += R->all[r].setup.bytes_sent;
        qm += R->all[r].query.msgs_sent, qb += R->all[r].query.bytes_sent;
        req += k->req_to ? k->req_to[r] : 0;
    }
    printf("\n---- distribution (--stats; not part of `cp --thread`'s answer) ----\n");
    printf("%s over %d rank%s (%s transport); host i is read by rank i mod %d\n", algo_name(k->algo), K,
           K == 1 ? "" : "s", lp_dist_name(k->D->d), K);
    if (k->algo == DK_AL1)
        printf("al1: rank 0 read every trace itself (%llu bytes of trace input); nothing moved between ranks\n",
               (unsigned long long)R->input_bytes);
    else
        printf("set-up (read, ECIs, match, per-host graphs): %llu messages, %llu bytes, wall %.3f s\n",
               (unsigned long long)sm, (unsigned long long)sb, R->wall_setup);
    printf("query: %llu messages, %llu bytes, %llu requests, %llu dependencies, %llu rounds, %llu hosts fetched, "
           "wall %.3f s\n", (unsigned long long)qm, (unsigned long long)qb, (unsigned long long)req,
           (unsigned long long)k->ndeps, (unsigned long long)k->nrounds, (unsigned long long)k->nfetched,
           R->wall_query);
    printf("  rank  hosts  requests  query sent msgs/bytes  query recv msgs/bytes  cpu set-up s  cpu query s%s\n",
           R->a->index ? "  index" : "");
    for (int r = 0; r < K; r++) {
        const dk_rank *x = &R->all[r];
        printf("  %4d  %5llu  %8llu  %9llu/%-11llu  %9llu/%-11llu  %12.3f  %11.3f", r, (unsigned long long)x->hosts,
               (unsigned long long)(k->req_to ? k->req_to[r] : 0), (unsigned long long)x->query.msgs_sent,
               (unsigned long long)x->query.bytes_sent, (unsigned long long)x->query.msgs_recv,
               (unsigned long long)x->query.bytes_recv, x->cpu_setup, x->cpu_query);
        printf(R->a->index ? "  %s\n" : "\n", dk_idx_name((int)x->idx));
    }
}

static void stats_json(const dk_run *R)
{
    const dkcp *k = &R->k;
    int K = k->D->size;
    printf("{\"distribution\": {\"algorithm\": \"%s\", \"ranks\": %d, \"transport\": \"%s\", \"hosts\": %u, "
           "\"wall_setup_s\": %.6f, \"wall_query_s\": %.6f, \"dependencies\": %llu, \"rounds\": %llu, "
           "\"hosts_fetched\": %llu, \"input_bytes_at_rank0\": %llu, \"per_rank\": [",
           algo_name(k->algo), K, lp_dist_name(k->D->d), k->nh, R->wall_setup, R->wall_query,
           (unsigned long long)k->ndeps, (unsigned long long)k->nrounds, (unsigned long long)k->nfetched,
           (unsigned long long)R->input_bytes);
    for (int r = 0; r < K; r++) {
        const dk_rank *x = &R->all[r];
        printf("%s{\"rank\": %d, \"hosts\": %llu, \"requests\": %llu, \"served\": %llu, "
               "\"setup\": {\"msgs_sent\": %llu, \"bytes_sent\": %llu, \"msgs_recv\": %llu, \"bytes_recv\": %llu}, "
               "\"query\": {\"msgs_sent\": %llu, \"bytes_sent\": %llu, \"msgs_recv\": %llu, \"bytes_recv\": %llu}, "
               "\"cpu_setup_s\": %.6f, \"cpu_eci_s\": %.6f, \"cpu_query_s\": %.6f, \"index\": \"%s\"}",
               r ? ", " : "", r, (unsigned long long)x->hosts, (unsigned long long)(k->req_to ? k->req_to[r] : 0),
               (unsigned long long)x->served, (unsigned long long)x->setup.msgs_sent,
               (unsigned long long)x->setup.bytes_sent, (unsigned long long)x->setup.msgs_recv,
               (unsigned long long)x->setup.bytes_recv, (unsigned long long)x->query.msgs_sent,
               (unsigned long long)x->query.bytes_sent, (unsigned long long)x->query.msgs_recv,
               (unsigned long long)x->query.bytes_recv, x->cpu_setup, x->cpu_eci, x->cpu_query,
               dk_idx_name((int)x->idx));
    }
    printf("]}}\n");
}

/* Every rank's figures to rank 0, printed there. */
static int stats(dk_run *R)
{
    cli_dist *D = R->k.D;
    lp_error err;
    lp_error_clear(&err);
    for (uint32_t h = 0; h < R->k.nh; h++)
        R->me.hosts += dk_host_is_mine(&R->k, h);
    void *all = NULL;
    size_t *lens = lp_calloc((size_t)D->size, sizeof *lens);
    int rc = 0;
    if (!lens)
        rc = LP_EXIT_NOMEM;
    else if (lp_dist_gather(D->d, 0, &R->me, sizeof R->me, &all, lens, &err))
        rc = cli_dist_fail(D, &err);
    lp_free(lens);
    if (!rc && D->rank == 0 && R->a->stats) {
        R->all = all;
        if (R->a->json)
            stats_json(R);
        else
            stats_text(R);
        R->all = NULL;
    }
    lp_free(all);
    return rc;
}

int cli_dist_kcp(cli_dist *D, int argc, char **argv)
{
    dkcp_args a;
    cli_args rest;
    int rc = cli_dist_parse(D, &cli_spec_dist_kcp, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (!a.thread || !rest.n) {
        cli_args_release(&cli_spec_dist_kcp, &a, &rest);
        if (D->rank == 0)
            return cli_usage("dist kcp", !a.thread ? "--thread is required" : "no kernel trace given (one per host)");
        return LP_EXIT_USAGE;
    }
    dk_run R;
    memset(&R, 0, sizeof R);
    R.a = &a;
    dkcp *k = &R.k;
    k->D = D, k->paths = rest.operands, k->nh = (uint32_t)rest.n, k->algo = a.algo, k->no_sync = a.no_sync;
    k->quiet = a.quiet, k->thread = a.thread, k->host = a.host;
    k->index_dir = a.index, k->verify = a.verify;
    cli_kquery q;
    memset(&q, 0, sizeof q);
    q.thread = a.thread, q.host = a.host;
    q.algo = a.unbounded ? LP_KCP_UNBOUNDED : LP_KCP_BOUNDED;
    cli_kout o = {a.json, a.path_limit, a.top, NULL, NULL};
    rc = run(&R, &q, &o);
    if (!rc) {
        fflush(stdout);
        rc = stats(&R);
    }
    if (!rc && D->rank == 0 && (ferror(stdout) || fflush(stdout))) {
        fprintf(stderr, "longpole dist kcp: writing the output failed\n");
        rc = LP_EXIT_IO;
    }
    if (!rc && R.diag_errors)
        rc = LP_EXIT_DATA;
    lp_kcp_breakdown_release(&q.bd);
    lp_kcp_release(&q.cp);
    dk_release(k);
    cli_args_release(&cli_spec_dist_kcp, &a, &rest);
    return rc;
}
