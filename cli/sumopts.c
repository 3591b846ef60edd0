/* sumopts.c: the summaries' options, declared once for `summary` and `stream`
 * (summary.h): which summaries (--by), rows (--top), the random paths' seed, and what
 * to skip. */
#include "summary.h"

#include <string.h>

int cli_parse_kinds(const char *s, unsigned *kinds)
{
    *kinds = 0;
    if (!s || !*s)
        return -1;
    for (const char *p = s;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        lp_sumkind k;
        if (n == 3 && memcmp(p, "all", 3) == 0)
            *kinds |= (1u << LP_SUM_NKINDS) - 1;
        else if (lp_sumkind_parse(p, n, &k) == 0)
            *kinds |= 1u << k;
        else
            return -1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static int set_kinds(void *dst, const char *v, char *msg, size_t n) { return cli_parse_kinds(v, dst); }

const cli_opt cli_sum_opts[] = {
    {"--by", .kind = CLI_FN, .arg = "LIST", CLI_AT(cli_sumopts, win.kinds), .fn = set_kinds,
     .err = "--by takes activity, worker, operator, comm (comma-separated) or all", .example = "worker,comm",
     .help = "summaries, comma-separated: activity, worker (straggler),\n"
             "operator, comm (sender -> receiver), or all (default)"},
    {"--top", .kind = CLI_COUNT, .arg = "K", CLI_AT(cli_sumopts, fmt.top), CLI_SEEN(cli_sumopts, top_given),
     .err = "--top needs a number", .example = "3",
     .help = "rows per summary (default 5; 0 = all; JSON: all unless given)"},
    {"--seed", .kind = CLI_COUNT, .arg = "N", CLI_AT(cli_sumopts, win.seed), .err = "--seed needs a number",
     .example = "7",
     .help = "seed of the random paths (default 1); window k draws from its own\n"
             "stream, so results do not depend on --threads"},
    {"--no-path", .kind = CLI_FLAG, CLI_AT(cli_sumopts, win.no_path), .help = "do not draw random paths"},
    {"--no-checks", .kind = CLI_FLAG, CLI_AT(cli_sumopts, win.no_checks), .help = "skip the instrumentation checks"},
    {"--timing", .kind = CLI_FLAG, CLI_AT(cli_sumopts, fmt.timing), .help = "print each window's analysis time"},
    CLI_END,
};

void cli_sumopts_init(cli_sumopts *o)
{
    o->win.kinds = (1u << LP_SUM_NKINDS) - 1;
    o->win.seed = 1;
    o->fmt.top = 5;
}

void cli_sumopts_apply(cli_sumopts *o)
{
    o->fmt.seed = o->win.seed;
    o->fmt.top_json = o->top_given ? o->fmt.top : 0;
}
