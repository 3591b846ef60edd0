/* main.c: the `longpole` command: dispatch to a command. */
#include "cli.h"

#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"cp", cmd_cp},
    {"check", cmd_check},
    {"convert", cmd_convert},
    {"generate", cmd_generate},
    {"info", cmd_info},
    {"demo", cmd_demo},
    {"help", cmd_help},
};

int main(int argc, char **argv)
{
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
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(commands[i].name, name) != 0)
            continue;
        /* `longpole CMD --help` */
        for (int k = 2; k < argc; k++)
            if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
                cli_help_topic(stdout, name);
                return LP_EXIT_OK;
            }
        return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "longpole: unknown command '%s' (see `longpole help`)\n", name);
    return LP_EXIT_USAGE;
}
