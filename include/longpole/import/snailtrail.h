/* snailtrail.h: SnailTrail's own binary log format (strymon-system/snailtrail,
 * logformat/rust/src/lib.rs, LogRecord::write/read; docs/formats/snailtrail.md).
 *
 * A log is a sequence of records; a record is seven MessagePack integers written one
 * after the other, with no array or map around them:
 *   timestamp      uint, ns since the Unix epoch
 *   local_worker   uint (u32): the timeline the event belongs to
 *   activity_type  uint: ActivityType (1 Input ... 13 BusyWaiting)
 *   event_type     uint: EventType (1 Start, 2 End, 3 Sent, 4 Received, 5 Bogus)
 *   correlator_id  int, -1 = none: pairs a send with its receives
 *   remote_worker  int, -1 = none: the other end of a sent/received message
 *   operator_id    int, -1 = none
 * Any MessagePack integer encoding is accepted for any field (positive/negative
 * fixint, uint8..64, int8..64); a record wrapped in a 7-element array (0x97) is
 * accepted too. The decoder works on bytes as they come (a record split across reads
 * waits for its end) and reports bad input with its byte offset.
 *
 * Mapping to the activity graph (MODEL.md): worker N is named "N", operator N "N";
 * Start/End pairs of a worker become activities, flattened as SnailTrail's PAG
 * construction does (a start inside an open activity cuts it; an end closes the
 * innermost open activity of its type and those opened inside it); Sent/Received
 * become messages matched by (sender, receiver, correlator), a send with no remote
 * worker matching a receive from any worker. Activity types map to longpole's types
 * (lp_st_type_name); Bogus events are SnailTrail-internal and skipped.
 */
#ifndef LONGPOLE_SNAILTRAIL_H
#define LONGPOLE_SNAILTRAIL_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "longpole/model/trace.h"

/* logformat's enums (values as in the Rust and Java sources). */
enum lp_st_activity {
    LP_ST_INPUT = 1,
    LP_ST_BUFFER = 2,
    LP_ST_SCHEDULING = 3,
    LP_ST_PROCESSING = 4,
    LP_ST_BARRIER_PROCESSING = 5,
    LP_ST_SERIALIZATION = 6,
    LP_ST_DESERIALIZATION = 7,
    LP_ST_FAULT_TOLERANCE = 8,
    LP_ST_CONTROL_MESSAGE = 9,
    LP_ST_DATA_MESSAGE = 10,
    LP_ST_UNKNOWN = 11,
    LP_ST_WAITING = 12,
    LP_ST_BUSY_WAITING = 13
};
enum lp_st_event { LP_ST_START = 1, LP_ST_END = 2, LP_ST_SENT = 3, LP_ST_RECEIVED = 4, LP_ST_BOGUS = 5 };

typedef struct lp_st_record {
    uint64_t timestamp;      /* ns */
    uint32_t local_worker;
    uint8_t activity;        /* enum lp_st_activity */
    uint8_t event;           /* enum lp_st_event */
    int64_t correlator;      /* -1 = none */
    int64_t remote_worker;   /* -1 = none, else 0..2^32-1 */
    int64_t operator_id;     /* -1 = none, else 0..2^32-1 */
} lp_st_record;

/* The longpole activity type of a SnailTrail activity type: "io", "buffer", "scheduling",
 * "processing", "barrier", "serialization", "deserialization", "fault_tolerance",
 * "control_message", "data_message", "unknown", "waiting", "busy_waiting"; NULL if
 * out of range. */
const char *lp_st_type_name(unsigned activity);
/* Its enum name as in logformat ("Input", ... "BusyWaiting"), and the event's. */
const char *lp_st_activity_name(unsigned activity);
const char *lp_st_event_name(unsigned event);
/* The SnailTrail activity type for a longpole type name (the inverse of
 * lp_st_type_name; LP_ST_UNKNOWN for any other name). */
unsigned lp_st_activity_of(const char *type_name);

/* Decode one record from p[0..n). Returns 1 (a record; *used bytes), 0 (p holds only
 * the beginning of a record: give more bytes), or -1 (not a valid record: why[] says
 * what, *used is the offset of the offending byte within p). */
int lp_st_decode(const unsigned char *p, size_t n, lp_st_record *r, size_t *used, char *why, size_t whyn);
/* Encode a record (as logformat's writer: smallest encodings, no array); returns the
 * number of bytes (at most 63). */
size_t lp_st_encode(const lp_st_record *r, unsigned char out[64]);

/* Write a trace as a SnailTrail log: every activity as a Start and an End event (gap
 * activities left out), every message as Sent and Received with the message index as
 * correlator, in time order (at one instant, per worker: ends, then zero-length
 * activities, then sends and receives, then starts, so reading it back pairs them
 * again). Workers and operators are numbered by id and first appearance; types map
 * with lp_st_activity_of; messages are DataMessage, or ControlMessage when their
 * `kind` attribute is "control". For tests and replays. */
lp_status lp_st_write(const lp_trace *t, FILE *out, lp_error *err);

#endif
