/* memlens.h — place named marks in a memlens trace from C or C++, and name
 * memory regions for the cache lens.
 *
 * Marks are natural snapshot times for the heap-evolution lens
 * (`memlens tree --marks`). Under `memlens record` the recorder defines
 * `memlens_mark`; without it the weak reference below is null and
 * MEMLENS_MARK does nothing, so a program can keep its marks in release
 * builds. Link nothing: this header is all there is.
 *
 *   #include "memlens.h"
 *   MEMLENS_MARK("phase 2");
 *
 * Under `memlens cache record` (the Valgrind tool), three more macros speak
 * to the tool through Valgrind client requests; natively they cost a few
 * instructions and do nothing:
 *
 *   MEMLENS_NAME_REGION(A, n * n * sizeof *A, "A");  names [A, A + len)
 *   MEMLENS_START();   with --roi: start recording references here
 *   MEMLENS_STOP();    with --roi: stop recording references here
 *
 * The requests use <valgrind/valgrind.h> when it is installed (Debian's
 * valgrind package) and MEMLENS_NO_VALGRIND_H is not defined; otherwise, on
 * x86-64 with GCC or Clang, this header's own implementation of Valgrind's
 * documented client-request sequence; elsewhere they compile to nothing. So
 * the header compiles anywhere, with or without Valgrind's headers.
 */
#ifndef MEMLENS_H
#define MEMLENS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by the memlens recorder (libmemlens_preload.so) when loaded. */
void memlens_mark(const char *name) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* Places a mark named `name` (a NUL-terminated string) at the current time. */
#define MEMLENS_MARK(name)          \
    do {                            \
        if (memlens_mark)           \
            memlens_mark(name);     \
    } while (0)

/* ---- cache lens: Valgrind client requests (memlens cache record) ---- */

/* The request codes: Valgrind's tool base for the letters 'M' 'L'. */
#define MEMLENS_REQ_BASE ((unsigned long)(((unsigned)'M' << 24) | ((unsigned)'L' << 16)))
#define MEMLENS_REQ_NAME_REGION (MEMLENS_REQ_BASE + 0)
#define MEMLENS_REQ_START (MEMLENS_REQ_BASE + 1)
#define MEMLENS_REQ_STOP (MEMLENS_REQ_BASE + 2)

#if !defined(MEMLENS_NO_VALGRIND_H) && defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MEMLENS_HAVE_VALGRIND_H 1
#endif
#endif

#if defined(MEMLENS_HAVE_VALGRIND_H)
#define MEMLENS_CLIENT_REQUEST_(req, a1, a2, a3) \
    VALGRIND_DO_CLIENT_REQUEST_STMT((req), (a1), (a2), (a3), 0, 0)
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* Valgrind's client-request protocol on amd64: RAX points at six words
 * (request, five arguments); a marker of four rotations of RDI (128 bits in
 * all, so RDI is unchanged) followed by `xchg %rbx,%rbx` tells Valgrind to
 * handle the request; natively the sequence does nothing and RDX, the result,
 * keeps its default. */
static __inline__ unsigned long memlens_client_request_(unsigned long req, unsigned long a1,
                                                        unsigned long a2, unsigned long a3)
{
    volatile unsigned long args[6];
    unsigned long result = 0;
    args[0] = req;
    args[1] = a1;
    args[2] = a2;
    args[3] = a3;
    args[4] = 0;
    args[5] = 0;
    __asm__ __volatile__("rolq $3, %%rdi ; rolq $13, %%rdi\n\t"
                         "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"
                         "xchgq %%rbx, %%rbx"
                         : "=d"(result)
                         : "a"(&args[0]), "0"(result)
                         : "cc", "memory");
    return result;
}
#define MEMLENS_CLIENT_REQUEST_(req, a1, a2, a3)                                  \
    ((void)memlens_client_request_((unsigned long)(req), (unsigned long)(a1), \
                                   (unsigned long)(a2), (unsigned long)(a3)))
#else
#define MEMLENS_CLIENT_REQUEST_(req, a1, a2, a3) ((void)0)
#endif

/* Names the `len` bytes at `ptr` `name` (a NUL-terminated string, at most 255
 * bytes kept): references to them belong to that region, whatever else (heap
 * block, global, stack) the bytes are. A later name of the same bytes wins. */
#define MEMLENS_NAME_REGION(ptr, len, name) \
    MEMLENS_CLIENT_REQUEST_(MEMLENS_REQ_NAME_REGION, (ptr), (len), (name))

/* Starts the region of interest (recorded with `memlens cache record --roi`). */
#define MEMLENS_START() MEMLENS_CLIENT_REQUEST_(MEMLENS_REQ_START, 0, 0, 0)

/* Ends the region of interest. */
#define MEMLENS_STOP() MEMLENS_CLIENT_REQUEST_(MEMLENS_REQ_STOP, 0, 0, 0)

#endif /* MEMLENS_H */
