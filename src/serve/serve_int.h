/* serve_int.h: what the parts of the server share (serve.c: HTTP; serve_hub.c: event
 * hubs; serve_cmd.c: the command cache). Private to src/report. */
#ifndef LP_SERVE_INT_H
#define LP_SERVE_INT_H

#include <sys/types.h>
#include "longpole/serve/serve.h"

/* A subscriber of a hub: the events after `after` (0 = from the oldest kept). */
typedef struct lp_server_sub lp_server_sub;
lp_server_sub *lp_server_sub_new(lp_server_hub *h, uint64_t after, double keepalive_s);
/* Copy up to max bytes of the stream into buf; blocks until there is something (an
 * event, or a keepalive comment after keepalive_s); -1 at the end of the stream. */
ssize_t lp_server_sub_read(lp_server_sub *s, char *buf, size_t max);
void lp_server_sub_free(lp_server_sub *s);
/* Wait (at most timeout_s) until a closed hub has no subscriber left: they have sent
 * their last events. Returns how many are left. */
int lp_server_hub_drain(lp_server_hub *h, double timeout_s);

#endif
