#include "import/kernel/kint.h"
lp_status lp_kmatch_run(const lp_ktrace *kt, lp_kmatch *m, lp_error *err) { (void)kt; (void)m; return lp_error_set(err, LP_ERR_UNSUPPORTED, "todo"); }
void lp_kmatch_release(lp_kmatch *m) { (void)m; }
