/* dist_commands.c: the subcommands of `longpole dist` (distcli.h): name, entry point,
 * summary, options. A new one is cli/cmd_dist_NAME.c and one line here. */
#include "distcli.h"
#include "dshard.h"

const cli_dist_command cli_dist_commands[] = {
    {"kcp", cli_dist_kcp, "the critical path of one thread of kernel traces, one trace per host, over the ranks "
                          "(AL1, AL2, AL3 of the distributed critical path paper)", &cli_spec_dist_kcp},
    {"summary", cli_dist_summary, "SnailTrail's summaries with the windows split over the ranks (same output as "
                                  "`summary`)", &cli_spec_dist_summary},
    {"infer", cli_dist_infer, "the Mystery Machine's causal model with the requests split over the ranks (same "
                              "model and output as `infer`)", &cli_spec_dist_infer},
    {"requests", cli_dist_requests, "the Mystery Machine's per-request critical paths and slack with the requests "
                                    "split over the ranks (same output as `requests`)", &cli_spec_dist_requests},
    {"spans", cli_dist_spans, "span critical paths with the traces split over the ranks (same output as `spans`)",
     &cli_spec_dist_spans},
    {NULL, NULL, NULL, NULL},
};
