/* dist_commands.c: the subcommands of `longpole dist` (distcli.h): name, entry point,
 * summary, options. A new one is cli/cmd_dist_NAME.c and one line here. */
#include "distcli.h"

const cli_dist_command cli_dist_commands[] = {
    {"kcp", cli_dist_kcp, "the critical path of one thread of kernel traces, one trace per host, over the ranks "
                          "(AL1, AL2, AL3 of the distributed critical path paper)", &cli_spec_dist_kcp},
    {NULL, NULL, NULL, NULL},
};
