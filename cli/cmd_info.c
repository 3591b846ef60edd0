/* cmd_info.c: `longpole info`: what a trace holds (counts, extent, workers, types). */
#include "cli.h"
#include "base/util.h"

#include <string.h>

typedef struct info_args {
    cli_load load;
    int json;
} info_args;

static const cli_opt info_opts[] = {
    {"--json", .kind = CLI_FLAG, CLI_AT(info_args, json), .help = "one JSON document"},
    CLI_END,
};

const cli_spec cli_spec_info = {
    .cmd = "info",
    .usage = "usage: longpole info [--json] TRACE...\n",
    .about = "Counts (workers, activities, gaps, messages), time extent and activity types.\n",
    .groups = {CLI_OWN("options:", info_opts), CLI_LOAD_GROUPS(info_args, load)},
    .size = sizeof(info_args),
};

static void print_json(const lp_trace *t, const uint64_t *per_type, const int64_t *type_ns)
{
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "info");
    cli_json_trace_counts(&j, t);
    lp_jsonw_key(&j, "types");
    lp_jsonw_obj(&j);
    for (uint32_t ty = 0; ty < t->ntypes; ty++)
        if (per_type[ty]) {
            lp_jsonw_key(&j, lp_trace_type_name(t, ty));
            lp_jsonw_obj(&j);
            lp_jsonw_ku64(&j, "count", per_type[ty]);
            lp_jsonw_ki64(&j, "ns", type_ns[ty]);
            lp_jsonw_obj_end(&j);
        }
    lp_jsonw_obj_end(&j);
    lp_jsonw_key(&j, "worker_names");
    lp_jsonw_arr(&j);
    for (uint32_t w = 0; w < t->nworkers; w++)
        lp_jsonw_str(&j, lp_trace_worker_name(t, w));
    lp_jsonw_arr_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static void print_text(const lp_trace *t, const uint64_t *per_type)
{
    char d[32];
    printf("workers     %u\n", t->nworkers);
    printf("activities  %llu (+%llu gaps filled)\n", (unsigned long long)(t->nacts - t->ngaps),
           (unsigned long long)t->ngaps);
    printf("messages    %llu (%llu received before sent)\n", (unsigned long long)t->nmsgs,
           (unsigned long long)t->nskew);
    printf("time        %lld .. %lld (%s)\n", (long long)t->tmin, (long long)t->tmax,
           lp_fmt_dur(t->tmax - t->tmin, d, sizeof d));
    printf("types      ");
    for (uint32_t ty = 0; ty < t->ntypes; ty++)
        if (per_type[ty])
            printf(" %s:%llu", lp_trace_type_name(t, ty), (unsigned long long)per_type[ty]);
    printf("\n");
}

int cmd_info(int argc, char **argv)
{
    info_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_info, argc, argv, &a, &rest);
    if (rc)
        return rc;
    lp_trace *t = NULL;
    int data_errors = 0;
    if (!rest.n)
        rc = cli_usage("info", "no trace given");
    else
        rc = cli_load_trace(&a.load, rest.operands, rest.n, &t, &data_errors);
    cli_args_release(&cli_spec_info, &a, &rest);
    if (rc)
        return rc;
    uint64_t *per_type = lp_calloc(t->ntypes, sizeof *per_type);
    int64_t *type_ns = lp_calloc(t->ntypes, sizeof *type_ns);
    if (!per_type || !type_ns) {
        lp_free(per_type);
        lp_free(type_ns);
        lp_trace_free(t);
        return LP_EXIT_NOMEM;
    }
    for (uint64_t i = 0; i < t->nacts; i++) {
        per_type[t->atype[i]]++;
        type_ns[t->atype[i]] += t->aend[i] - t->astart[i];
    }
    if (a.json)
        print_json(t, per_type, type_ns);
    else
        print_text(t, per_type);
    lp_free(per_type);
    lp_free(type_ns);
    lp_trace_free(t);
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
