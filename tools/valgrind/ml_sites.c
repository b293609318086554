/* ml_sites.c — reference sites: one per (instruction, operand), with its
 * kind, size and a label text symbolized from the debug info.
 *
 * Sites are what give memlens's per-label address prediction its power:
 * every operand of every instruction is its own strided stream. A site is
 * created when its instruction is first translated and announced to memlens
 * (a SITE record) before any of its references; retranslations reuse it.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ml_tool.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"

typedef struct SiteNode {
   struct SiteNode *next;
   UWord key;            /* ip << 4 | operand index */
   UWord id;
   UInt kind, size;
} SiteNode;

static VgHashTable *sites;
static UWord next_site = 1;

static const HChar *kind_word(UInt kind)
{
   switch (kind) {
   case ML_READ: return "load";
   case ML_WRITE: return "store";
   case ML_MODIFY: return "modify";
   default: return "fetch";
   }
}

/* "main matmul.c:23 load", "0x10919c main matmul.c:23 load" with --with-ip,
   "fetch" for instruction fetches (they share one label in the trace). */
static void label_text(HChar *out, SizeT cap, Addr ip, UInt kind)
{
   DiEpoch ep = VG_(current_DiEpoch)();
   const HChar *fn = NULL, *file = NULL, *dir = NULL, *obj = NULL;
   UInt line = 0;
   HChar where[256];
   if (kind == ML_FETCH) {
      VG_(snprintf)(out, cap, "instruction fetch");
      return;
   }
   if (!VG_(get_fnname)(ep, ip, &fn))
      fn = NULL;
   if (VG_(get_filename_linenum)(ep, ip, &file, &dir, &line) && file)
      VG_(snprintf)(where, sizeof where, "%s %s:%u", fn ? fn : "?", file, line);
   else if (fn)
      VG_(snprintf)(where, sizeof where, "%s", fn);
   else if (VG_(get_objname)(ep, ip, &obj) && obj)
      VG_(snprintf)(where, sizeof where, "in %s", VG_(basename)(obj));
   else
      VG_(snprintf)(where, sizeof where, "0x%lx", ip);
   if (ml_clo_with_ip)
      VG_(snprintf)(out, cap, "0x%lx %s %s", ip, where, kind_word(kind));
   else
      VG_(snprintf)(out, cap, "%s %s", where, kind_word(kind));
}

UWord ml_site_for(Addr ip, UInt nth, UInt kind, UInt size)
{
   UWord key = (ip << 4) | (nth & 15);
   SiteNode *n;
   HChar text[400];
   UWord words[3];
   if (!sites)
      sites = VG_(HT_construct)("memlens.sites");
   n = VG_(HT_lookup)(sites, key);
   if (n && n->kind == kind && n->size == size)
      return n->id;
   if (n) /* the code changed under the same address: a new site */
      VG_(HT_remove)(sites, key);
   n = VG_(malloc)("memlens.site", sizeof *n);
   n->key = key;
   n->id = next_site++;
   n->kind = kind;
   n->size = size;
   VG_(HT_add_node)(sites, n);
   label_text(text, sizeof text, ip, kind);
   words[0] = n->id;
   words[1] = ip;
   words[2] = kind | ((UWord)size << 8);
   ml_stream_record(ML_REC_SITE, words, 3, text);
   return n->id;
}
