/* ml_stream.c — the raw word stream from the tool to `memlens cache record`.
 *
 * Why a raw stream and not the memlens format itself: a Valgrind tool is a
 * static binary without libc, so it could not use libzstd without porting
 * it, and every cycle spent encoding here is spent on the client's (only)
 * core. The tool therefore writes fixed 8-byte words, the cheapest possible
 * output, into a FIFO; `memlens cache record` reads them on the other core,
 * resolves regions and encodes the trace with memlens-trace's writer.
 *
 * The stream is a sequence of little-endian 64-bit words:
 *
 *   site << 48 | address          a reference by site 1..0xFFFE (kind, size
 *                                  and label come from the site's record)
 *   type << 40 | n, n words       a control record (top 16 bits 0); strings
 *                                  are a byte-length word and the bytes,
 *                                  zero-padded to whole words
 *
 * Control record types are listed in ml_tool.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ml_tool.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_vki.h"

#define ML_O_CLOEXEC 02000000 /* Linux's O_CLOEXEC; vki does not name it */
#define BUF_WORDS (1 << 17)   /* 1 MiB */

static UWord buf[BUF_WORDS];
UWord *ml_buf_pos = buf;
UWord *ml_buf_end = buf + BUF_WORDS;
static Int out_fd = -1;
static Bool broken = False;

void ml_stream_open(void)
{
   SysRes r = VG_(open)(ml_clo_out, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC | ML_O_CLOEXEC,
                        0644);
   if (sr_isError(r)) {
      VG_(umsg)("memlens: cannot open the output %s\n", ml_clo_out);
      VG_(exit)(1);
   }
   out_fd = (Int)sr_Res(r);
}

void ml_stream_flush(void)
{
   const UChar *p = (const UChar *)buf;
   SizeT left = (SizeT)((UChar *)ml_buf_pos - (UChar *)buf);
   ml_buf_pos = buf;
   if (out_fd < 0 || broken)
      return;
   while (left > 0) {
      Int n = VG_(write)(out_fd, p, left > (1 << 30) ? (1 << 30) : (Int)left);
      if (n <= 0) {
         if (n == -VKI_EINTR)
            continue;
         VG_(umsg)("memlens: the trace output failed (memlens cache record gone?); "
                   "recording stops\n");
         broken = True;
         ml_recording = False;
         return;
      }
      p += n;
      left -= (SizeT)n;
   }
}

void ml_stream_record(UWord type, const UWord *words, UWord n, const HChar *text)
{
   SizeT len = text ? VG_(strlen)(text) : 0;
   UWord text_words = text ? 1 + (len + 7) / 8 : 0;
   UWord total = 1 + n + text_words;
   tl_assert(total < BUF_WORDS / 2);
   if ((UWord)(ml_buf_end - ml_buf_pos) < total)
      ml_stream_flush();
   *ml_buf_pos++ = (type << 40) | (n + text_words);
   for (UWord i = 0; i < n; i++)
      *ml_buf_pos++ = words[i];
   if (text) {
      *ml_buf_pos++ = len;
      if (len > 0)
         ml_buf_pos[(len - 1) / 8] = 0; /* zero the padding */
      VG_(memcpy)(ml_buf_pos, text, len);
      ml_buf_pos += (len + 7) / 8;
   }
}

void ml_stream_close(const HChar *why)
{
   if (out_fd < 0)
      return;
   ml_stream_record(ML_REC_END, NULL, 0, why);
   ml_stream_flush();
   VG_(close)(out_fd);
   out_fd = -1;
}

void ml_stream_abandon(void)
{
   ml_buf_pos = buf;
   ml_recording = False;
   broken = True;
   if (out_fd >= 0)
      VG_(close)(out_fd);
   out_fd = -1;
}
