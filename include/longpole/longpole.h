/* longpole.h: the umbrella header of liblongpole, the library under the `longpole`
 * tool: the activity-graph model, trace formats and critical-path analyses.
 * Conventions (status.h): functions return lp_status and fill an lp_error; the library
 * never prints and never exits; all memory goes through alloc.h. */
#ifndef LONGPOLE_H
#define LONGPOLE_H

#define LONGPOLE_VERSION "0.1.0"

#include "longpole/status.h"
#include "longpole/alloc.h"
#include "longpole/strtab.h"
#include "longpole/diag.h"
#include "longpole/trace.h"
#include "longpole/io.h"
#include "longpole/import.h"
#include "longpole/pag.h"
#include "longpole/cpath.h"
#include "longpole/breakdown.h"
#include "longpole/check.h"
#include "longpole/gen.h"
#include "longpole/jsonw.h"
#include "longpole/chrome_export.h"
#include "longpole/window.h"
#include "longpole/stream.h"
#include "longpole/spancp.h"
#include "longpole/reqstats.h"
#include "longpole/reqpath.h"
#include "longpole/skew.h"
#include "longpole/genreq.h"
#include "longpole/report.h"

#endif
