/* registry.c: the tables of foreign-format importers and of span formats (load.h). One
 * line per format. */
#include "longpole/load/load.h"

#include <string.h>

extern const lp_importer lp_import_jaeger, lp_import_zipkin, lp_import_otlp; /* span formats (span.h) */
extern const lp_importer lp_import_chrome; /* chrome/chrome.c */
extern const lp_importer lp_import_spark; /* spark.c */
extern const lp_importer lp_import_snailtrail; /* snailtrail.c */

static const lp_importer *const importers[] = {
    &lp_import_jaeger,
    &lp_import_zipkin,
    &lp_import_otlp,
    &lp_import_chrome,
    &lp_import_spark,
    &lp_import_snailtrail,
    NULL,
};

const lp_importer *const *lp_importers(void) { return importers; }

const lp_importer *lp_importer_find(const char *name)
{
    for (size_t i = 0; importers[i]; i++)
        if (strcmp(importers[i]->name, name) == 0)
            return importers[i];
    return NULL;
}

const lp_importer *lp_importer_detect(const unsigned char *head, size_t n, const char *path)
{
    const lp_importer *best = NULL;
    int bestscore = 0;
    for (size_t i = 0; importers[i]; i++) {
        int s = importers[i]->detect(head, n, path);
        if (s > bestscore) {
            best = importers[i];
            bestscore = s;
        }
    }
    return best;
}

/* ---- span formats ------------------------------------------------------------------ */

extern const lp_span_format lp_spanfmt_jaeger, lp_spanfmt_zipkin, lp_spanfmt_otlp;

static const lp_span_format *const formats[] = {&lp_spanfmt_jaeger, &lp_spanfmt_zipkin, &lp_spanfmt_otlp, NULL};

const lp_span_format *const *lp_span_formats(void) { return formats; }

const lp_span_format *lp_span_format_find(const char *name)
{
    for (size_t i = 0; formats[i]; i++)
        if (strcmp(formats[i]->name, name) == 0)
            return formats[i];
    return NULL;
}

const lp_span_format *lp_span_format_detect(const unsigned char *head, size_t n, const char *path)
{
    const lp_span_format *best = NULL;
    int bs = 0;
    for (size_t i = 0; formats[i]; i++) {
        int s = formats[i]->detect(head, n, path);
        if (s > bs) {
            bs = s;
            best = formats[i];
        }
    }
    return best;
}
