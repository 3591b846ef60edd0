/* main.c: the `longpole` command: dispatch to the command named by the first argument
 * (the table is commands.c); `--help` or `-h` anywhere before `--` prints the command's help. */
#include "cli.h"

#include <string.h>

int main(int argc, char **argv)
{
    cli_self_init(argv[0]);
    if (argc < 2) {
        cli_help_topic(stderr, NULL);
        return LP_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return cmd_help(argc - 1, argv + 1);
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("longpole %s\n", LONGPOLE_VERSION);
        return LP_EXIT_OK;
    }
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (strcmp(c->name, name) != 0)
            continue;
        for (int k = 2; k < argc && strcmp(argv[k], "--") != 0; k++) /* after --: a recorded command's */
            if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
                cli_command_help(stdout, c);
                return LP_EXIT_OK;
            }
        return c->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "longpole: unknown command '%s' (see `longpole help`)\n", name);
    return LP_EXIT_USAGE;
}
