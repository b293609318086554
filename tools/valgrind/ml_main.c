/* ml_main.c — the memlens Valgrind tool: registration, options, client
 * requests (named regions, region of interest), threads' stacks, loaded
 * objects, fork/exec and exit.
 *
 * Run by `memlens cache record`, which builds this tool, points VALGRIND_LIB
 * at a directory holding it and reads its output stream (ml_stream.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ml_tool.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "valgrind.h"

/* The client requests of include/memlens.h. */
#define ML_USERREQ_BASE VG_USERREQ_TOOL_BASE('M', 'L')
#define ML_USERREQ_NAME_REGION (ML_USERREQ_BASE + 0)
#define ML_USERREQ_START (ML_USERREQ_BASE + 1)
#define ML_USERREQ_STOP (ML_USERREQ_BASE + 2)

const HChar *ml_clo_out = NULL;
Bool ml_clo_roi = False;
Bool ml_clo_instructions = False;
Bool ml_clo_with_ip = False;
Bool ml_clo_heap = True;
Bool ml_recording = True;

static Bool process_option(const HChar *arg)
{
   const HChar *tmp;
   if VG_STR_CLO(arg, "--out", tmp)
      ml_clo_out = tmp;
   else if VG_BOOL_CLO(arg, "--roi", ml_clo_roi) {}
   else if VG_BOOL_CLO(arg, "--instructions", ml_clo_instructions) {}
   else if VG_BOOL_CLO(arg, "--with-ip", ml_clo_with_ip) {}
   else if VG_BOOL_CLO(arg, "--heap", ml_clo_heap) {}
   else
      return False;
   return True;
}

static void print_usage(void)
{
   VG_(printf)(
      "    --out=PATH               where to write the reference stream (a FIFO\n"
      "                             read by `memlens cache record`) [required]\n"
      "    --roi=no|yes             record only between MEMLENS_START() and\n"
      "                             MEMLENS_STOP() [no]\n"
      "    --instructions=no|yes    record instruction fetches too [no]\n"
      "    --with-ip=no|yes         put instruction addresses in the labels [no]\n"
      "    --heap=yes|no            track heap blocks and their sites [yes]\n");
}

static void print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

/* Reads a NUL-terminated client string of at most cap - 1 bytes. */
static void client_string(Addr p, HChar *out, SizeT cap)
{
   SizeT i = 0;
   for (; i + 1 < cap; i++) {
      if ((i == 0 || ((p + i) & 0xFFF) == 0) &&
          !VG_(am_is_valid_for_client)(p + i, 1, VKI_PROT_READ))
         break;
      out[i] = ((const HChar *)p)[i];
      if (out[i] == 0)
         return;
   }
   out[i] = 0;
}

static Bool handle_client_request(ThreadId tid, UWord *args, UWord *ret)
{
   (void)tid;
   if (!VG_IS_TOOL_USERREQ('M', 'L', args[0]))
      return False;
   *ret = 0;
   switch (args[0]) {
   case ML_USERREQ_NAME_REGION: {
      HChar name[256];
      UWord w[2] = {args[1], args[2]};
      client_string(args[3], name, sizeof name);
      ml_stream_record(ML_REC_NAME, w, 2, name[0] ? name : "(unnamed)");
      return True;
   }
   case ML_USERREQ_START:
      ml_stream_record(ML_REC_START, NULL, 0, NULL);
      if (ml_clo_roi)
         ml_recording = True;
      return True;
   case ML_USERREQ_STOP:
      ml_stream_record(ML_REC_STOP, NULL, 0, NULL);
      if (ml_clo_roi)
         ml_recording = False;
      return True;
   default:
      return False;
   }
}

/* ---- loaded objects: their data symbols become regions in memlens ---- */

#define MAX_MODULES 4096
static Addr announced[MAX_MODULES];
static UInt n_announced;

void ml_announce_modules(void)
{
   for (const DebugInfo *di = VG_(next_DebugInfo)(NULL); di; di = VG_(next_DebugInfo)(di)) {
      Addr text = VG_(DebugInfo_get_text_avma)(di);
      SizeT size = VG_(DebugInfo_get_text_size)(di);
      const HChar *path = VG_(DebugInfo_get_filename)(di);
      Bool seen = False;
      if (size == 0 || !path)
         continue;
      for (UInt i = 0; i < n_announced && !seen; i++)
         seen = announced[i] == text;
      if (seen || n_announced == MAX_MODULES)
         continue;
      announced[n_announced++] = text;
      UWord w[3] = {text, size, (UWord)VG_(DebugInfo_get_text_bias)(di)};
      ml_stream_record(ML_REC_MODULE, w, 3, path);
   }
}

/* ---- threads ---- */

static Bool *stack_announced;

static void thread_runs(ThreadId tid, ULong blocks_done)
{
   (void)blocks_done;
   ml_heap_thread_runs(tid);
   if (!stack_announced[tid]) {
      Addr max = VG_(thread_get_stack_max)(tid);
      SizeT size = VG_(thread_get_stack_size)(tid);
      if (max != 0 && size != 0) {
         UWord w[3] = {max + 1 - size, max + 1, tid};
         ml_stream_record(ML_REC_STACK, w, 3, NULL);
         stack_announced[tid] = True;
      }
   }
}

static void thread_created(ThreadId parent, ThreadId child)
{
   (void)parent;
   stack_announced[child] = False; /* announced when it first runs */
}

static void pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt n)
{
   (void)tid; (void)args; (void)n;
   if (sysno == __NR_execve || sysno == __NR_execveat)
      ml_stream_flush(); /* the image is replaced if it succeeds */
}

static void post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt n, SysRes res)
{
   (void)tid; (void)sysno; (void)args; (void)n; (void)res;
}

static void before_fork(ThreadId tid)
{
   (void)tid;
   ml_stream_flush();
}

static void in_child(ThreadId tid)
{
   (void)tid;
   ml_stream_abandon(); /* only the recorded process itself is traced */
}

/* ---- lifecycle ---- */

static void post_clo_init(void)
{
   if (!ml_clo_out) {
      VG_(umsg)("memlens: --out=PATH is required (run the tool through "
                "`memlens cache record`)\n");
      VG_(exit)(1);
   }
   ml_recording = !ml_clo_roi;
   stack_announced = VG_(calloc)("memlens.stacks", VG_N_THREADS, sizeof(Bool));
   ml_heap_init();
   ml_stream_open();
   VG_(atfork)(before_fork, NULL, in_child);
}

static void fini(Int exitcode)
{
   (void)exitcode;
   ml_stream_close("exit");
}

static void pre_clo_init(void)
{
   VG_(details_name)("memlens");
   VG_(details_version)("1");
   VG_(details_description)("memory references for the memlens cache lens");
   VG_(details_copyright_author)("Copyright (C) the memlens authors; GPL-2.0-or-later.");
   VG_(details_bug_reports_to)("the memlens issue tracker");
   VG_(basic_tool_funcs)(post_clo_init, ml_instrument, fini);
   VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
   VG_(needs_client_requests)(handle_client_request);
   VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
   VG_(track_start_client_code)(thread_runs);
   VG_(track_pre_thread_ll_create)(thread_created);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
