/* service.h: what the CLI's long-running commands (`serve`, `stream`) share: stopping
 * cleanly on SIGINT or SIGTERM, and telling scripts the port they listen on. */
#ifndef LP_CLI_SERVICE_H
#define LP_CLI_SERVICE_H

#include <signal.h>

/* Set by SIGINT or SIGTERM once cli_stop_catch() has run; the handler stays until
 * cli_stop_default() (a second signal while stopping must not cut the shutdown short). */
extern volatile sig_atomic_t cli_stop_flag;
void cli_stop_catch(void);
void cli_stop_default(void);

/* Write "PORT\n" to path atomically (a temporary file renamed into place); failures
 * are ignored (the port is also printed on stderr). */
void cli_write_port_file(const char *path, unsigned port);

#endif
