/* progress.c: progress lines for the analysis phases of the commands (issue 6 item 4),
 * beside cli_progress (common.c), which the loaders call with bytes: these count items
 * (windows, rows) or, with no total, say which phase runs ("analysing ..."). Like
 * cli_progress they print on stderr only when it is a terminal and LONGPOLE_NO_PROGRESS
 * is unset, and cli_progress_done() clears the line. */
#include "cli.h"

#include <unistd.h>

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
