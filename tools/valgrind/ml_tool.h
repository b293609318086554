/* ml_tool.h — shared declarations of the memlens Valgrind tool.
 *
 * The tool records every data reference (and optionally every instruction
 * fetch) of the client, plus what memlens needs to map a reference to its
 * home region: the program's named regions (client requests), its heap
 * blocks with their allocation site, the threads' stacks and the loaded
 * objects (for data symbols). It streams all of it, in the raw word protocol
 * described in ml_stream.c, to `memlens cache record`, which encodes the
 * memlens trace. SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ML_TOOL_H
#define ML_TOOL_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* A flat IR operand (a temporary or a constant). */
typedef IRExpr IRAtom;

/* ---- options (ml_main.c) ---- */
extern const HChar *ml_clo_out;      /* --out=PATH: the FIFO or file to write */
extern Bool ml_clo_roi;              /* --roi=yes: record between START and STOP only */
extern Bool ml_clo_instructions;     /* --instructions=yes: record instruction fetches */
extern Bool ml_clo_with_ip;          /* --with-ip=yes: label texts carry the address */
extern Bool ml_clo_heap;             /* --heap=no: do not track allocations */

/* Whether references are being recorded now (the region of interest). */
extern Bool ml_recording;

/* ---- the raw stream (ml_stream.c) ---- */

/* Kinds of a site (the reference kinds of the memlens format). */
#define ML_READ   0
#define ML_WRITE  1
#define ML_MODIFY 2
#define ML_FETCH  3

/* Control record types. */
#define ML_REC_SITE      1  /* site id, ip, kind | size << 8, string label */
#define ML_REC_ALLOC     2  /* address, size, heap site id */
#define ML_REC_FREE      3  /* address */
#define ML_REC_HEAPSITE  4  /* heap site id, ip, string name */
#define ML_REC_NAME      5  /* address, length, string name */
#define ML_REC_START     6  /* (none) */
#define ML_REC_STOP      7  /* (none) */
#define ML_REC_STACK     8  /* lowest address, one past the highest, thread id */
#define ML_REC_MODULE    9  /* text address, text size, load bias, string path */
#define ML_REC_END      10  /* string why: "exit", "exec" */
#define ML_REC_BIGREF   11  /* site id, address (site ids or addresses too wide) */

/* The largest site id that fits a compact reference word. */
#define ML_MAX_COMPACT_SITE 0xFFFEUL
#define ML_ADDR_MASK        ((1UL << 48) - 1)

void ml_stream_open(void);
void ml_stream_flush(void);
void ml_stream_close(const HChar *why);
/* Drops the buffer and the descriptor without writing (a forked child). */
void ml_stream_abandon(void);
void ml_stream_record(UWord type, const UWord *words, UWord n, const HChar *text);

/* The hot path: one compact reference word. */
extern UWord *ml_buf_pos;
extern UWord *ml_buf_end;

/* ---- sites (ml_sites.c) ---- */
UWord ml_site_for(Addr ip, UInt nth, UInt kind, UInt size);

/* ---- heap (ml_heap.c) ---- */
extern UWord ml_cur_pending_ret;
void ml_heap_init(void);
/* Returns the allocation function kind (> 0) when `ip` is the entry of one. */
UInt ml_heap_entry_kind(Addr ip);
VG_REGPARM(0) void ml_heap_enter(UWord kind, UWord a0, UWord a1, UWord a2, UWord sp);
VG_REGPARM(0) void ml_heap_return(UWord rax, UWord sp);
void ml_heap_thread_runs(ThreadId tid);

/* ---- modules and stacks (ml_main.c) ---- */
void ml_announce_modules(void);

/* ---- instrumentation (ml_instrument.c) ---- */
IRSB *ml_instrument(VgCallbackClosure *closure, IRSB *sbIn,
                    const VexGuestLayout *layout,
                    const VexGuestExtents *vge,
                    const VexArchInfo *archinfo_host,
                    IRType gWordTy, IRType hWordTy);

#endif
