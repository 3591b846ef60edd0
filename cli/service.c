/* service.c: stop signals and port files of `serve` and `stream` (service.h). */
#include "service.h"

#include <stdio.h>
#include <string.h>

volatile sig_atomic_t cli_stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    cli_stop_flag = 1;
}

void cli_stop_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void cli_stop_default(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

void cli_write_port_file(const char *path, unsigned port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%u\n", port);
        if (fclose(f) == 0)
            rename(tmp, path);
    }
}
