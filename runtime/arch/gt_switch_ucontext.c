/* gt_switch_ucontext.c: the context switch through ucontext, for when no assembly
 * backend fits (or LD_UCONTEXT=ON). It is slower: swapcontext also saves and restores
 * the signal mask, a system call per switch.
 *
 * A context's stack pointer is the address of a ucontext_t. A switched-out context
 * keeps its ucontext_t in the frame of its ld_ctx_jump call, which stays alive until
 * the context is resumed; a new context keeps it at the top of its own stack.
 */
#include <stdint.h>
#include <ucontext.h>

#include "gt_switch.h"

typedef struct ld_ctx_boot {
    ucontext_t uc;
    ld_ctx_entry entry;
    void *arg;
} ld_ctx_boot;

/* makecontext passes int arguments only, so the boot block's address comes in halves. */
static void ld_ctx_boot_run(unsigned hi, unsigned lo)
{
    uintptr_t addr = ((uintptr_t)hi << 16 << 16) | (uintptr_t)lo;
    ld_ctx_boot *b = (ld_ctx_boot *)addr;
    b->entry(b->arg);
}

/* The boot block sits at the top of the stack; the context runs below it. getcontext
 * copies the caller's floating-point state, which the new context inherits. */
void *ld_ctx_frame(void *stack_lo, size_t size, ld_ctx_entry entry, void *arg)
{
    uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)63;
    uintptr_t at = (top - sizeof(ld_ctx_boot)) & ~(uintptr_t)63;
    ld_ctx_boot *b = (ld_ctx_boot *)at;
    uint64_t wide = (uint64_t)at;

    getcontext(&b->uc);
    b->uc.uc_link = NULL;
    b->uc.uc_stack.ss_sp = stack_lo;
    b->uc.uc_stack.ss_size = at - (uintptr_t)stack_lo;
    b->entry = entry;
    b->arg = arg;
    makecontext(&b->uc, (void (*)(void))ld_ctx_boot_run, 2, (unsigned)(wide >> 32),
                (unsigned)wide);
    return &b->uc;
}

/* The saved context lives in this frame, which is suspended, not left, by the switch. */
void ld_ctx_jump(void **save_sp, void *load_sp)
{
    ucontext_t here;

    /* The frame outlives the store: it is suspended until someone jumps back. */
    // cppcheck-suppress autoVariables
    *save_sp = &here;
    swapcontext(&here, (ucontext_t *)load_sp);
}

/* A context that is never resumed saves nothing. */
void ld_ctx_load(void *load_sp)
{
    setcontext((ucontext_t *)load_sp);
    __builtin_unreachable();
}
