/* reqpar.c: run a function on several threads (see reqpar.h). */
#include "base/par.h"

#include <pthread.h>
#include <unistd.h>

typedef struct part {
    lp_reqpar_fn fn;
    void *ctx;
    unsigned tid, n;
} part;

static void *trampoline(void *p)
{
    part *a = p;
    a->fn(a->ctx, a->tid, a->n);
    return NULL;
}

unsigned lp_reqpar_threads(unsigned want)
{
    if (want == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        want = c > 0 ? (unsigned)c : 1;
    }
    return want > 64 ? 64 : want;
}

int lp_reqpar_run(unsigned n, lp_reqpar_fn fn, void *ctx)
{
    if (n <= 1) {
        fn(ctx, 0, 1);
        return 0;
    }
    if (n > 64)
        n = 64;
    pthread_t th[64];
    part parts[64];
    unsigned started = 0;
    int rc = 0;
    for (unsigned t = 1; t < n; t++) {
        parts[t] = (part){fn, ctx, t, n};
        if (pthread_create(&th[t], NULL, trampoline, &parts[t]) != 0) {
            rc = -1;
            break;
        }
        started = t;
    }
    fn(ctx, 0, n);
    for (unsigned t = 1; t <= started; t++)
        pthread_join(th[t], NULL);
    /* parts that could not get a thread run here, in order */
    for (unsigned t = started + 1; t < n; t++)
        fn(ctx, t, n);
    return rc;
}
