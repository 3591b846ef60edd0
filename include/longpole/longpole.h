/* longpole.h: the umbrella header of liblongpole, the library under the `longpole`
 * tool: the activity-graph model, trace formats and critical-path analyses. Every
 * public header, layer by layer (docs/architecture.md); code inside the library
 * includes what it uses instead.
 * Conventions (status.h): functions return lp_status and fill an lp_error; the library
 * never prints and never exits; all memory goes through alloc.h. */
#ifndef LONGPOLE_H
#define LONGPOLE_H

#include "longpole/base/version.h"
#include "longpole/base/alloc.h"
#include "longpole/base/diag.h"
#include "longpole/base/jsonw.h"
#include "longpole/base/progress.h"
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/codec/io.h"
#include "longpole/codec/json.h"
#include "longpole/model/pag.h"
#include "longpole/model/span.h"
#include "longpole/model/trace.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/import/reqlog.h"
#include "longpole/import/snailtrail.h"
#include "longpole/import/spanfmt.h"
#include "longpole/import/spark.h"
#include "longpole/load/inputs.h"
#include "longpole/load/load.h"
#include "longpole/load/runs.h"
#include "longpole/analysis/critical-path/breakdown.h"
#include "longpole/analysis/critical-path/check.h"
#include "longpole/analysis/critical-path/cpath.h"
#include "longpole/analysis/critical-path/headline.h"
#include "longpole/analysis/snailtrail/cpmetric.h"
#include "longpole/analysis/snailtrail/snapshot.h"
#include "longpole/analysis/snailtrail/summary.h"
#include "longpole/analysis/snailtrail/window.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/reqpath.h"
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/analysis/spans/spancp.h"
#include "longpole/stream/stream.h"
#include "longpole/gen/gen.h"
#include "longpole/gen/genreq.h"
#include "longpole/gen/scenario.h"
#include "longpole/export/chrome_export.h"
#include "longpole/export/sqlite_export.h"
#include "longpole/report/report.h"
#include "longpole/serve/serve.h"

#endif
