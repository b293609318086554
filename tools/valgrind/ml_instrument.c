/* ml_instrument.c — the IR instrumentation: which statements are memory
 * references, and the helpers that record them.
 *
 * The rules are Cachegrind's (cg_main.c, Valgrind 3.19), so the number of
 * data references equals Cachegrind's "D refs" for the same run:
 *   - a load (WrTmp of Load), a store, a guarded load/store (LoadG/StoreG,
 *     counted only when the guard holds) is one reference of its IR type's
 *     size (16 for SSE, 32 for AVX);
 *   - a dirty helper that touches memory (x87/FXSAVE/CPUID-style) is a read,
 *     a write or both, its size clamped to 64 bytes (Cachegrind's smallest
 *     line size on this host);
 *   - a CAS is a read and a write of the location; an LL a read, an SC a write;
 *   - a write right after a read of the same instruction, of the same size
 *     and the same address expression, merges with it into one "modify"
 *     (x += 1 on memory, read-modify-write instructions, CAS);
 *   - `rep movs`/`rep stos` are loops in the IR: one load and/or store per
 *     iteration, as in Cachegrind.
 * With --instructions=yes each instruction is also a fetch of its length.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ml_tool.h"
#include "libvex_guest_offsets.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"

#define MAX_EVENTS 64
#define MIN_LINE_SIZE 64 /* Cachegrind clamps dirty-helper sizes to its smallest line */

typedef struct {
   UInt kind, size, nth;
   Addr ip;
   IRAtom *ea;
} Event;

static Event events[MAX_EVENTS];
static Int n_events;

/* The hot path: one reference word into the buffer. */
static VG_REGPARM(2) void ml_ref(UWord word, Addr a)
{
   if (!ml_recording)
      return;
   if (LIKELY((a & ~ML_ADDR_MASK) == 0)) {
      *ml_buf_pos++ = word | a;
      if (UNLIKELY(ml_buf_pos >= ml_buf_end))
         ml_stream_flush();
   } else {
      UWord w[2] = {word >> 48, a};
      ml_stream_record(ML_REC_BIGREF, w, 2, NULL);
   }
}

/* A reference of a site whose id does not fit a compact word. */
static VG_REGPARM(2) void ml_ref_big(UWord site, Addr a)
{
   UWord w[2] = {site, a};
   if (ml_recording)
      ml_stream_record(ML_REC_BIGREF, w, 2, NULL);
}

static IRDirty *ref_call(const Event *e)
{
   UWord site = ml_site_for(e->ip, e->nth, e->kind, e->size);
   if (site <= ML_MAX_COMPACT_SITE)
      return unsafeIRDirty_0_N(2, "ml_ref", VG_(fnptr_to_fnentry)(ml_ref),
                               mkIRExprVec_2(mkIRExpr_HWord(site << 48), e->ea));
   return unsafeIRDirty_0_N(2, "ml_ref_big", VG_(fnptr_to_fnentry)(ml_ref_big),
                            mkIRExprVec_2(mkIRExpr_HWord(site), e->ea));
}

static void flush_events(IRSB *sb)
{
   for (Int i = 0; i < n_events; i++)
      addStmtToIRSB(sb, IRStmt_Dirty(ref_call(&events[i])));
   n_events = 0;
}

static void add_event(IRSB *sb, UInt kind, UInt size, Addr ip, UInt nth, IRAtom *ea)
{
   tl_assert(isIRAtom(ea));
   if (n_events == MAX_EVENTS)
      flush_events(sb);
   events[n_events++] = (Event){kind, size, nth, ip, ea};
}

static Bool same_atom(const IRAtom *a, const IRAtom *b)
{
   if (a->tag == Iex_RdTmp && b->tag == Iex_RdTmp)
      return a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp;
   if (a->tag == Iex_Const && b->tag == Iex_Const)
      return eqIRConst(a->Iex.Const.con, b->Iex.Const.con);
   return False;
}

/* The per-instruction state while walking a superblock. */
typedef struct {
   Addr ip;
   UInt nth; /* data events of this instruction so far */
} Insn;

static void data_read(IRSB *sb, Insn *in, UInt size, IRAtom *ea)
{
   add_event(sb, ML_READ, size, in->ip, in->nth++, ea);
}

static void data_write(IRSB *sb, Insn *in, UInt size, IRAtom *ea)
{
   Event *last = n_events > 0 ? &events[n_events - 1] : NULL;
   if (last && last->kind == ML_READ && last->ip == in->ip && last->size == size &&
       same_atom(last->ea, ea)) {
      last->kind = ML_MODIFY;
      return;
   }
   add_event(sb, ML_WRITE, size, in->ip, in->nth++, ea);
}

static void guarded(IRSB *sb, Insn *in, UInt kind, UInt size, IRAtom *ea, IRAtom *guard)
{
   Event e = {kind, size, in->nth++, in->ip, ea};
   flush_events(sb);
   IRDirty *di = ref_call(&e);
   di->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static IRAtom *get64(IRSB *sb, Int offset)
{
   IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Get(offset, Ity_I64)));
   return IRExpr_RdTmp(t);
}

/* At the start of every superblock: if the running thread waits for a
   pending allocation call to return here, report its result. */
static void check_return(IRSB *sb, Addr sb_addr)
{
   IRTemp pend = newIRTemp(sb->tyenv, Ity_I64);
   IRTemp hit = newIRTemp(sb->tyenv, Ity_I1);
   addStmtToIRSB(sb, IRStmt_WrTmp(pend, IRExpr_Load(Iend_LE, Ity_I64,
                                                    mkIRExpr_HWord((HWord)&ml_cur_pending_ret))));
   addStmtToIRSB(sb, IRStmt_WrTmp(hit, IRExpr_Binop(Iop_CmpEQ64, IRExpr_RdTmp(pend),
                                                    IRExpr_Const(IRConst_U64(sb_addr)))));
   IRAtom *rax = get64(sb, OFFSET_amd64_RAX);
   IRAtom *rsp = get64(sb, OFFSET_amd64_RSP);
   IRDirty *di = unsafeIRDirty_0_N(0, "ml_heap_return", VG_(fnptr_to_fnentry)(ml_heap_return),
                                   mkIRExprVec_2(rax, rsp));
   di->guard = IRExpr_RdTmp(hit);
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void heap_entry(IRSB *sb, UInt kind)
{
   IRAtom *a0 = get64(sb, OFFSET_amd64_RDI);
   IRAtom *a1 = get64(sb, OFFSET_amd64_RSI);
   IRAtom *a2 = get64(sb, OFFSET_amd64_RDX);
   IRAtom *sp = get64(sb, OFFSET_amd64_RSP);
   IRDirty *di = unsafeIRDirty_0_N(0, "ml_heap_enter", VG_(fnptr_to_fnentry)(ml_heap_enter),
                                   mkIRExprVec_5(mkIRExpr_HWord(kind), a0, a1, a2, sp));
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

IRSB *ml_instrument(VgCallbackClosure *closure, IRSB *sbIn, const VexGuestLayout *layout,
                    const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                    IRType gWordTy, IRType hWordTy)
{
   IRSB *sb;
   IRTypeEnv *tyenv = sbIn->tyenv;
   Insn in = {0, 0};
   Bool first = True;
   Int i = 0;
   (void)closure; (void)layout; (void)archinfo_host;
   if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
      VG_(tool_panic)("memlens: only amd64 is supported");
   ml_announce_modules();
   sb = deepCopyIRSBExceptStmts(sbIn);
   n_events = 0;
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark)
      addStmtToIRSB(sb, sbIn->stmts[i++]);
   for (; i < sbIn->stmts_used; i++) {
      IRStmt *st = sbIn->stmts[i];
      if (!st || st->tag == Ist_NoOp)
         continue;
      switch (st->tag) {
      case Ist_IMark: {
         UInt kind;
         in.ip = (Addr)st->Ist.IMark.addr;
         in.nth = 0;
         addStmtToIRSB(sb, st);
         if (first && ml_clo_heap)
            check_return(sb, (Addr)vge->base[0]);
         first = False;
         kind = ml_heap_entry_kind(in.ip);
         if (kind) {
            flush_events(sb);
            heap_entry(sb, kind);
         }
         if (ml_clo_instructions)
            add_event(sb, ML_FETCH, st->Ist.IMark.len, in.ip, 15, mkIRExpr_HWord(in.ip));
         break;
      }
      case Ist_WrTmp: {
         IRExpr *data = st->Ist.WrTmp.data;
         if (data->tag == Iex_Load)
            data_read(sb, &in, sizeofIRType(data->Iex.Load.ty), data->Iex.Load.addr);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_Store:
         data_write(sb, &in, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)),
                    st->Ist.Store.addr);
         addStmtToIRSB(sb, st);
         break;
      case Ist_StoreG: {
         IRStoreG *sg = st->Ist.StoreG.details;
         guarded(sb, &in, ML_WRITE, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), sg->addr,
                 sg->guard);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_LoadG: {
         IRLoadG *lg = st->Ist.LoadG.details;
         IRType ty = Ity_INVALID, wide = Ity_INVALID;
         typeOfIRLoadGOp(lg->cvt, &wide, &ty);
         guarded(sb, &in, ML_READ, sizeofIRType(ty), lg->addr, lg->guard);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_Dirty: {
         IRDirty *d = st->Ist.Dirty.details;
         if (d->mFx != Ifx_None) {
            UInt size = d->mSize > MIN_LINE_SIZE ? MIN_LINE_SIZE : (UInt)d->mSize;
            if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
               data_read(sb, &in, size, d->mAddr);
            if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
               data_write(sb, &in, size, d->mAddr);
         }
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_CAS: {
         IRCAS *cas = st->Ist.CAS.details;
         UInt size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
         if (cas->dataHi)
            size *= 2;
         data_read(sb, &in, size, cas->addr);
         data_write(sb, &in, size, cas->addr);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_LLSC:
         if (st->Ist.LLSC.storedata == NULL) {
            data_read(sb, &in, sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)),
                      st->Ist.LLSC.addr);
            flush_events(sb);
         } else {
            data_write(sb, &in, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)),
                       st->Ist.LLSC.addr);
         }
         addStmtToIRSB(sb, st);
         break;
      case Ist_Exit:
         flush_events(sb);
         addStmtToIRSB(sb, st);
         break;
      default:
         addStmtToIRSB(sb, st);
         break;
      }
   }
   flush_events(sb);
   return sb;
}
