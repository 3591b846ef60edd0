/* progress.c: the progress line on stderr, shown only when it is a terminal and
 * LONGPOLE_NO_PROGRESS is unset. cli_progress is the library's progress callback: the
 * loaders report bytes ("loading", "reading"), every other phase items (requests,
 * windows, rows); cli_progress_items and _beside are the commands' own phases (issue 6
 * item 4), with no total only the phase's name ("analysing ..."). At most one update
 * per 0.1 s; cli_progress_done() clears the line. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int progress_on = -1; /* -1: not decided */
static int progress_shown;
static struct timespec progress_last;

int cli_progress_enabled(void)
{
    if (progress_on < 0)
        progress_on = isatty(2) && !getenv("LONGPOLE_NO_PROGRESS");
    return progress_on;
}

void cli_progress_disable(void) { progress_on = 0; }

int cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    (void)ctx;
    if (!cli_progress_enabled())
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double dt = (double)(now.tv_sec - progress_last.tv_sec) + (double)(now.tv_nsec - progress_last.tv_nsec) / 1e9;
    if (progress_shown && dt < 0.1 && done < total)
        return 0;
    progress_last = now;
    progress_shown = 1;
    /* loading reports bytes; every other phase counts items (requests, windows, rows) */
    int bytes = strcmp(what, "loading") == 0 || strcmp(what, "reading") == 0;
    if (!bytes) {
        if (total) {
            int pct = done >= total ? 100 : (int)((double)done * 100.0 / (double)total);
            int bar = pct * 30 / 100;
            fprintf(stderr, "\r%-10s [%.*s%*s] %3d%%  %llu/%llu ", what, bar, "==============================",
                    30 - bar, "", pct, (unsigned long long)done, (unsigned long long)total);
        } else if (done) {
            fprintf(stderr, "\r%-10s %llu ", what, (unsigned long long)done);
        } else {
            fprintf(stderr, "\r%-10s ... ", what);
        }
        return 0;
    }
    if (total) {
        int pct = (int)((double)done * 100.0 / (double)total);
        if (pct > 100)
            pct = 100;
        int bar = pct * 30 / 100;
        fprintf(stderr, "\r%-10s [%.*s%*s] %3d%%  %.1f/%.1f MB ", what, bar, "==============================",
                30 - bar, "", pct, (double)done / 1e6, (double)total / 1e6);
    } else {
        fprintf(stderr, "\r%-10s %.1f MB ", what, (double)done / 1e6);
    }
    return 0;
}

void cli_progress_done(void)
{
    if (progress_shown) {
        fprintf(stderr, "\r\033[K");
        progress_shown = 0;
    }
}

void cli_progress_items(const char *what, uint64_t done, uint64_t total)
{
    if (cli_progress_enabled())
        cli_progress(NULL, what, done, total);
}

void cli_progress_beside(const char *what, uint64_t done, uint64_t total)
{
    /* results printed to the terminal as they come are their own progress, and a bar
     * between them would garble them: only when standard output goes elsewhere */
    if (cli_progress_enabled() && !isatty(1))
        cli_progress(NULL, what, done, total);
}
