/* ml_heap.c — heap blocks and their allocation sites, without replacing
 * the allocator.
 *
 * Replacing malloc (as Memcheck does) would hide the allocator's own memory
 * references and change the program's addresses, so the reference count
 * would no longer equal Cachegrind's. Instead the tool instruments the entry
 * of the allocation functions (found by symbol name) and every superblock
 * start: at entry it notes the arguments and the return address; when the
 * thread arrives at that return address with the stack pointer just above
 * the entry's, the function has returned and RAX is the block. The stack
 * trace taken there starts at the caller, the allocation site, which names
 * the block's region ("heap: main matmul.c:41"). Frees are reported at
 * entry. Calls nested in a pending one (operator new → malloc) are ignored.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ml_tool.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"

enum { K_NONE, K_MALLOC, K_CALLOC, K_REALLOC, K_REALLOCARRAY, K_FREE, K_MEMALIGN,
       K_POSIX_MEMALIGN, K_VALLOC };

static const struct { const HChar *name; UInt kind; } functions[] = {
   {"malloc", K_MALLOC}, {"__libc_malloc", K_MALLOC},
   {"calloc", K_CALLOC}, {"__libc_calloc", K_CALLOC},
   {"realloc", K_REALLOC}, {"__libc_realloc", K_REALLOC},
   {"reallocarray", K_REALLOCARRAY}, {"__libc_reallocarray", K_REALLOCARRAY},
   {"free", K_FREE}, {"__libc_free", K_FREE}, {"cfree", K_FREE},
   {"memalign", K_MEMALIGN}, {"__libc_memalign", K_MEMALIGN},
   {"aligned_alloc", K_MEMALIGN},
   {"posix_memalign", K_POSIX_MEMALIGN},
   {"valloc", K_VALLOC}, {"__libc_valloc", K_VALLOC}, {"pvalloc", K_VALLOC},
   {"__libc_pvalloc", K_VALLOC},
};

/* Frames skipped when naming a site: the allocator's own wrappers and the
   C++ library's containers, so a vector's growth is named by the user's line. */
static Bool is_wrapper(const HChar *fn)
{
   static const HChar *prefixes[] = {"operator new", "_Zn", "malloc", "calloc", "realloc",
                                     "__libc_", "strdup", "__strdup", "strndup",
                                     "__strndup", "aligned_alloc", "posix_memalign",
                                     "memalign", "valloc", "std::", "__gnu_cxx::"};
   HChar head[256];
   const HChar *paren;
   SizeT len;
   for (UInt i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
      if (VG_(strncmp)(fn, prefixes[i], VG_(strlen)(prefixes[i])) == 0)
         return True;
   /* "void std::vector<…>::_M_realloc_insert(…)": a library function named
      before its parameter list. */
   paren = VG_(strchr)(fn, '(');
   len = paren ? (SizeT)(paren - fn) : VG_(strlen)(fn);
   if (len >= sizeof head)
      len = sizeof head - 1;
   VG_(memcpy)(head, fn, len);
   head[len] = 0;
   return VG_(strstr)(head, " std::") != NULL || VG_(strstr)(head, " __gnu_cxx::") != NULL;
}

typedef struct {
   Bool active;
   UInt kind;
   UWord a0, a1, a2, sp, ret;
} Pending;

static Pending *pending; /* one per thread */
UWord ml_cur_pending_ret = 0;

typedef struct HeapSite {
   struct HeapSite *next;
   UWord key; /* the frame's address */
   UWord id;
} HeapSite;
static VgHashTable *heap_sites;
static UWord next_heap_site = 1;

void ml_heap_init(void)
{
   pending = VG_(calloc)("memlens.pending", VG_N_THREADS, sizeof *pending);
   heap_sites = VG_(HT_construct)("memlens.heap_sites");
}

UInt ml_heap_entry_kind(Addr ip)
{
   const HChar *name;
   if (!ml_clo_heap || !VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), ip, &name))
      return K_NONE;
   for (UInt i = 0; i < sizeof functions / sizeof functions[0]; i++)
      if (VG_(strcmp)(name, functions[i].name) == 0)
         return functions[i].kind;
   return K_NONE;
}

static void emit(UWord type, UWord a, UWord b, UWord c)
{
   UWord w[3] = {a, b, c};
   ml_stream_record(type, w, type == ML_REC_FREE ? 1 : 3, NULL);
}

VG_REGPARM(0) void ml_heap_enter(UWord kind, UWord a0, UWord a1, UWord a2, UWord sp)
{
   ThreadId tid = VG_(get_running_tid)();
   Pending *p = &pending[tid];
   if (p->active) {
      if (sp < p->sp)
         return; /* nested in a pending call: its caller's view wins */
      p->active = False; /* stale (the pending call never returned: longjmp) */
   }
   if (kind == K_FREE) {
      if (a0 != 0)
         emit(ML_REC_FREE, a0, 0, 0);
      return;
   }
   p->active = True;
   p->kind = (UInt)kind;
   p->a0 = a0;
   p->a1 = a1;
   p->a2 = a2;
   p->sp = sp;
   p->ret = *(UWord *)sp;
   ml_cur_pending_ret = p->ret;
}

/* The heap site of the current thread's innermost non-wrapper frame. */
static UWord site_here(ThreadId tid)
{
   Addr ips[8];
   UInt n = VG_(get_StackTrace)(tid, ips, 8, NULL, NULL, 0);
   DiEpoch ep = VG_(current_DiEpoch)();
   UInt pick = 0;
   const HChar *fn;
   for (UInt i = 0; i < n; i++) {
      if (VG_(get_fnname)(ep, ips[i] - 1, &fn) && is_wrapper(fn))
         continue;
      pick = i;
      break;
   }
   if (n == 0)
      return 0;
   HeapSite *s = VG_(HT_lookup)(heap_sites, ips[pick]);
   if (s)
      return s->id;
   s = VG_(malloc)("memlens.heap_site", sizeof *s);
   s->key = ips[pick];
   s->id = next_heap_site++;
   VG_(HT_add_node)(heap_sites, s);
   /* Name it by the calling line: look up the call instruction (ip - 1). */
   HChar name[400];
   const HChar *file = NULL, *dir = NULL;
   UInt line = 0;
   Addr at = ips[pick] - 1; /* a return address: the call is just before */
   if (!VG_(get_fnname)(ep, at, &fn))
      fn = "?";
   if (VG_(get_filename_linenum)(ep, at, &file, &dir, &line) && file)
      VG_(snprintf)(name, sizeof name, "heap: %s %s:%u", fn, file, line);
   else
      VG_(snprintf)(name, sizeof name, "heap: %s", fn);
   UWord w[2] = {s->id, ips[pick]};
   ml_stream_record(ML_REC_HEAPSITE, w, 2, name);
   return s->id;
}

VG_REGPARM(0) void ml_heap_return(UWord rax, UWord sp)
{
   ThreadId tid = VG_(get_running_tid)();
   Pending *p = &pending[tid];
   if (!p->active || sp != p->sp + sizeof(UWord))
      return; /* not the return of the pending call (a loop reaching the address) */
   p->active = False;
   ml_cur_pending_ret = 0;
   UWord addr = rax, size = 0, old = 0;
   switch (p->kind) {
   case K_MALLOC: size = p->a0; break;
   case K_VALLOC: size = p->a0; break;
   case K_CALLOC: size = p->a0 * p->a1; break;
   case K_MEMALIGN: size = p->a1; break;
   case K_REALLOC: old = p->a0; size = p->a1; break;
   case K_REALLOCARRAY: old = p->a0; size = p->a1 * p->a2; break;
   case K_POSIX_MEMALIGN:
      size = p->a2;
      addr = rax == 0 && p->a0 ? *(UWord *)p->a0 : 0;
      break;
   default: return;
   }
   if (p->kind == K_REALLOC || p->kind == K_REALLOCARRAY) {
      if (old != 0 && (addr != 0 || size == 0))
         emit(ML_REC_FREE, old, 0, 0);
   }
   if (addr == 0)
      return;
   emit(ML_REC_ALLOC, addr, size, site_here(tid));
}

void ml_heap_thread_runs(ThreadId tid)
{
   Pending *p = &pending[tid];
   ml_cur_pending_ret = p->active ? p->ret : 0;
}
