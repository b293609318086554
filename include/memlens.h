/* memlens.h — place named marks in a memlens trace from C or C++.
 *
 * Marks are natural snapshot times for the heap-evolution lens
 * (`memlens tree --marks`). Under `memlens record` the recorder defines
 * `memlens_mark`; without it the weak reference below is null and
 * MEMLENS_MARK does nothing, so a program can keep its marks in release
 * builds. Link nothing: this header is all there is.
 *
 *   #include "memlens.h"
 *   MEMLENS_MARK("phase 2");
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

#endif /* MEMLENS_H */
