/* cmd_skew.c: `longpole skew`: per-host clock offsets estimated from the RPC patterns
 * of request logs (Mystery Machine, OSDI'14 §3; docs/analyses/mystery-skew.md). */
#include "reqcli.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct skew_args {
    reqcli rq;
    int json, pairs;
} skew_args;

static void skew_init(void *p) { reqcli_init(&((skew_args *)p)->rq); }

static const cli_opt skew_opts[] = {
    {"--json", .kind = CLI_FLAG, CLI_AT(skew_args, json), .help = "one JSON document: hosts and pairs"},
    {"--pairs", .kind = CLI_FLAG, CLI_AT(skew_args, pairs), .help = "also list every host pair's estimate"},
    CLI_END,
};

const cli_spec cli_spec_skew = {
    .cmd = "skew",
    .usage = "usage: longpole skew [OPTIONS] LOG...\n",
    .about = "Clock offsets of every host of request logs (UberTrace, OSDI'14 §3). Within a task,\n"
             "control going from host C to host S and back to C is an RPC: the client interval\n"
             "minus the server interval is the round trip; assuming symmetric delays, S's first\n"
             "event is half a round trip after C's event before it. Each host pair keeps the\n"
             "estimate of its fastest round trip over all requests; offsets add up along the\n"
             "path of fastest round trips to a reference host (per connected group of hosts:\n"
             "--reference, else the host in the most RPCs). Offset = host clock minus reference\n"
             "clock; `bound` is the worst-case error (half the round trips along the path).\n"
             "`infer` and `requests` apply this correction unless --no-skew.\n",
    .groups = {CLI_OWN("options:", skew_opts), REQCLI_GROUPS(skew_args, rq)},
    .size = sizeof(skew_args),
    .init = skew_init,
};

/* A signed duration: "-27.9 ms". */
static const char *sdur(int64_t v, char *buf, size_t n)
{
    if (n < 2)
        return "";
    buf[0] = '-';
    lp_fmt_dur(v < 0 ? -v : v, buf + 1, n - 1);
    return v < 0 ? buf : buf + 1;
}

static int cmp_name(const void *a, const void *b, const lp_reqlog *rl)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return strcmp(lp_reqlog_str(rl, rl->host_name[x]), lp_reqlog_str(rl, rl->host_name[y]));
}

/* insertion of host ids sorted by name (a merge sort: there may be millions) */
static void sort_hosts(uint32_t *h, uint32_t *tmp, uint32_t n, const lp_reqlog *rl)
{
    if (n < 2)
        return;
    uint32_t m = n / 2;
    sort_hosts(h, tmp, m, rl);
    sort_hosts(h + m, tmp, n - m, rl);
    uint32_t i = 0, j = m, k = 0;
    while (i < m && j < n)
        tmp[k++] = cmp_name(&h[j], &h[i], rl) < 0 ? h[j++] : h[i++];
    while (i < m)
        tmp[k++] = h[i++];
    while (j < n)
        tmp[k++] = h[j++];
    memcpy(h, tmp, n * sizeof *h);
}

#define HN(h) lp_reqlog_str(rl, rl->host_name[h])

static void print_json(const lp_reqlog *rl, const lp_skew *sk, const uint32_t *ord, int pairs, int data_errors)
{
    uint32_t H = sk->nhosts;
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "skew");
    lp_jsonw_ku64(&j, "hosts_count", H);
    lp_jsonw_ku64(&j, "pairs_count", sk->npairs);
    lp_jsonw_ku64(&j, "rpcs", sk->nrpc);
    lp_jsonw_ku64(&j, "rpcs_negative_rtt", sk->nnegative);
    lp_jsonw_ku64(&j, "components", sk->ncomponents);
    lp_jsonw_key(&j, "hosts");
    lp_jsonw_arr(&j);
    for (uint32_t k = 0; k < H; k++) {
        uint32_t h = ord[k];
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "host", HN(h));
        lp_jsonw_ki64(&j, "offset_ns", sk->offset[h]);
        lp_jsonw_ki64(&j, "bound_ns", sk->bound[h]);
        lp_jsonw_ku64(&j, "rpcs", sk->rpcs[h]);
        lp_jsonw_key(&j, "from");
        if (sk->parent[h] == LP_SKEW_ROOT || sk->parent[h] == LP_SKEW_NONE)
            lp_jsonw_null(&j);
        else
            lp_jsonw_str(&j, HN(sk->parent[h]));
        lp_jsonw_kstr(&j, "reference", HN(sk->root[h]));
        lp_jsonw_kbool(&j, "supported", sk->parent[h] != LP_SKEW_NONE);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_arr_end(&j);
    if (pairs) {
        lp_jsonw_key(&j, "pairs");
        lp_jsonw_arr(&j);
        for (uint32_t i = 0; i < sk->npairs; i++) {
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "a", HN(sk->pairs[i].a));
            lp_jsonw_kstr(&j, "b", HN(sk->pairs[i].b));
            lp_jsonw_ki64(&j, "theta_ns", sk->pairs[i].theta);
            lp_jsonw_ki64(&j, "min_rtt_ns", sk->pairs[i].rtt);
            lp_jsonw_ku64(&j, "rpcs", sk->pairs[i].n);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
    }
    lp_jsonw_kbool(&j, "input_errors", data_errors);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static void print_text(const lp_reqlog *rl, const lp_skew *sk, const uint32_t *ord, int pairs)
{
    uint32_t H = sk->nhosts;
    printf("clock skew from %llu RPC patterns (%llu ignored: negative round trip), %u hosts, %u host pairs, "
           "%u group%s of connected hosts\n",
           (unsigned long long)sk->nrpc, (unsigned long long)sk->nnegative, H, sk->npairs, sk->ncomponents,
           sk->ncomponents == 1 ? "" : "s");
    printf("%-24s %14s %14s %10s  %s\n", "host", "offset", "bound", "rpcs", "from");
    char b1[40], b2[40];
    for (uint32_t k = 0; k < H; k++) {
        uint32_t h = ord[k];
        const char *from = sk->parent[h] == LP_SKEW_ROOT   ? "(reference)"
                         : sk->parent[h] == LP_SKEW_NONE ? "(no RPC: not corrected)"
                                                         : HN(sk->parent[h]);
        printf("%-24s %14s %14s %10llu  %s\n", HN(h), sdur(sk->offset[h], b1, sizeof b1),
               lp_fmt_dur(sk->bound[h], b2, sizeof b2), (unsigned long long)sk->rpcs[h], from);
    }
    if (!pairs)
        return;
    printf("\n%-24s %-24s %14s %14s %10s\n", "host a", "host b", "b - a", "min rtt", "rpcs");
    for (uint32_t i = 0; i < sk->npairs; i++)
        printf("%-24s %-24s %14s %14s %10llu\n", HN(sk->pairs[i].a), HN(sk->pairs[i].b),
               sdur(sk->pairs[i].theta, b1, sizeof b1), lp_fmt_dur(sk->pairs[i].rtt, b2, sizeof b2),
               (unsigned long long)sk->pairs[i].n);
}

#undef HN

int cmd_skew(int argc, char **argv)
{
    skew_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_skew, argc, argv, &a, &rest);
    if (rc)
        return rc;
    a.rq.paths = rest.operands;
    a.rq.npaths = rest.n;
    lp_reqlog *rl;
    int data_errors;
    rc = reqcli_load(&a.rq, "skew", &rl, &data_errors);
    cli_args_release(&cli_spec_skew, &a, &rest);
    if (rc)
        return rc;
    lp_skew sk;
    lp_skew_opts so = {a.rq.threads, a.rq.reference};
    lp_error err;
    lp_error_clear(&err);
    if (lp_skew_estimate(rl, &so, &sk, &err)) {
        lp_reqlog_free(rl);
        return cli_fail("skew", &err);
    }
    uint32_t H = sk.nhosts;
    uint32_t *ord = lp_malloc((H ? H : 1) * sizeof *ord), *tmp = lp_malloc((H ? H : 1) * sizeof *tmp);
    if (ord && tmp) {
        for (uint32_t h = 0; h < H; h++)
            ord[h] = h;
        sort_hosts(ord, tmp, H, rl);
        if (a.json)
            print_json(rl, &sk, ord, a.pairs, data_errors);
        else
            print_text(rl, &sk, ord, a.pairs);
    }
    rc = !ord || !tmp ? LP_EXIT_NOMEM : data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
    lp_free(ord), lp_free(tmp);
    lp_skew_release(&sk);
    lp_reqlog_free(rl);
    return rc;
}
