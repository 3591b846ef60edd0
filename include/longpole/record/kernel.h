/* kernel.h (record): the recorder source "kernel": the kernel's scheduling, interrupt,
 * timer, block and network events through tracefs while the recorded command runs,
 * written as `kernel.ftrace` (ftrace text, read by lp_ktrace_read). Implemented in
 * src/record/kernel.c; docs/formats/ftrace.md describes the file.
 */
#ifndef LONGPOLE_RECORD_KERNEL_H
#define LONGPOLE_RECORD_KERNEL_H

#include "longpole/record/record.h"

extern const lp_rec_source lp_rec_source_kernel;

#endif
