/* spark.h: Apache Spark event logs (the "spark" importer, src/import/spark.c;
 * mapping in docs/formats/spark.md).
 *
 * A Spark application writes its SparkListener events as JSON lines either to one
 * file (v1: "app-...", "application_...", "local-...", optionally compressed) or, with
 * rolling event logs (Spark 3.0+, spark.eventLog.rolling.enabled), to a directory
 * "eventlog_v2_<appId>[_<attempt>]" holding "events_<N>_<appId>[.<codec>]" files, an
 * empty "appstatus_<appId>[.inprogress]" marker and possibly compacted
 * "events_<N>_<appId>.compact" files. A directory is one application: its event files
 * are read in index order into one state, from the last compacted file on (as Spark's
 * history server does). The registry's importer reads single files;
 * lp_trace_load() calls lp_spark_read_dir() for such directories.
 */
#ifndef LONGPOLE_SPARK_H
#define LONGPOLE_SPARK_H

#include <stddef.h>
#include "longpole/formats/lpt.h"

/* Is `path` a directory that holds a rolling (v2) Spark event log? True when its name
 * starts with "eventlog_v2_" or it holds an "appstatus_*" file or "events_<N>_*" files. */
int lp_spark_is_log_dir(const char *path);

/* The event files of a rolling event-log directory, in the order Spark replays them
 * (from the last .compact file on, by index). *files is a malloc'd array of malloc'd
 * paths (free with lp_spark_files_free). Files with a codec this build cannot read
 * (lz4, lzf, snappy) are listed too; the reader reports them. */
lp_status lp_spark_log_files(const char *dir, char ***files, size_t *nfiles, lp_error *err);
void lp_spark_files_free(char **files, size_t n);

/* Read a rolling event-log directory into the builder: every event file in order, one
 * application. Data problems go to the builder's diagnostics. */
lp_status lp_spark_read_dir(lp_builder *b, const char *dir, const lp_load_opts *opts, lp_error *err);

#endif
