/* longpole.h: the umbrella header of liblongpole, the library under the `longpole`
 * tool: the activity-graph model, trace formats and critical-path analyses.
 * Conventions (status.h): functions return lp_status and fill an lp_error; the library
 * never prints and never exits; all memory goes through alloc.h. */
#ifndef LONGPOLE_H
#define LONGPOLE_H

#define LONGPOLE_VERSION "0.1.0"

#include "longpole/base/status.h"
#include "longpole/base/alloc.h"
#include "longpole/base/strtab.h"
#include "longpole/base/diag.h"
#include "longpole/model/trace.h"
#include "longpole/codec/io.h"
#include "longpole/import/import.h"
#include "longpole/model/pag.h"
#include "longpole/analysis/critical-path/cpath.h"
#include "longpole/analysis/critical-path/breakdown.h"
#include "longpole/analysis/critical-path/check.h"
#include "longpole/gen/gen.h"
#include "longpole/base/jsonw.h"
#include "longpole/export/chrome_export.h"
#include "longpole/analysis/snailtrail/window.h"
#include "longpole/stream/stream.h"
#include "longpole/analysis/spans/spancp.h"
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/analysis/mystery/reqpath.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/gen/genreq.h"
#include "longpole/report/report.h"

#endif
