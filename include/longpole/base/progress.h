/* progress.h: the progress callback of long library operations (loading, analyses).
 * The library never draws anything: it calls the caller's function now and then. */
#ifndef LONGPOLE_BASE_PROGRESS_H
#define LONGPOLE_BASE_PROGRESS_H

#include <stdint.h>

/* Called now and then by long operations: done and total in the operation's unit
 * (bytes for loading). Return non-zero to cancel (the operation then fails). */
typedef int (*lp_progress_fn)(void *ctx, const char *what, uint64_t done, uint64_t total);

#endif
