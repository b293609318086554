/* Calls malloc with a frame-pointer register that holds no frame pointer,
 * as code built without frame pointers may (python3 does, with rbp = -16):
 * an unwinder must bounds-check it without overflowing. The stack is
 * re-aligned below the red zone for the call. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void *malloc_with_rbp(size_t n, long rbp) {
    void *p;
    __asm__ volatile(
        "mov %%rsp, %%rbx\n\t"
        "sub $128, %%rsp\n\t"
        "and $-16, %%rsp\n\t"
        "push %%rbp\n\t"
        "push %%rbp\n\t"
        "mov %2, %%rbp\n\t"
        "call malloc@PLT\n\t"
        "pop %%rbp\n\t"
        "pop %%rbp\n\t"
        "mov %%rbx, %%rsp\n\t"
        : "=a"(p)
        : "D"(n), "S"(rbp)
        : "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc");
    return p;
}

int main(void) {
    long values[] = {-16, -8, -24, 0, 8, 0x7ffffffff000};
    for (int i = 0; i < 6; i++) free(malloc_with_rbp(32, values[i]));
    puts("all calls returned");
    return 0;
}
