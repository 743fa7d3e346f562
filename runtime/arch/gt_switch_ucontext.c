/* gt_switch_ucontext.c: the context switch through ucontext, for when no assembly
 * backend fits (or LD_UCONTEXT=ON). It is slower: swapcontext also saves and restores
 * the signal mask, a system call per switch.
 *
 * A switched-out context's stack pointer is the address of a ucontext_t, kept in the
 * frame of its ld_ctx_jump call, which stays alive until the context is resumed. A new
 * context's is its stack's top, below which ld_ctx_start lays a boot block out.
 */
#include <fenv.h>
#include <stdint.h>
#include <ucontext.h>

#include "gt_switch.h"

typedef struct ld_ctx_boot {
    ucontext_t uc;
    const ld_ctx_fp *fp;
    ld_ctx_entry entry;
    void *arg;
} ld_ctx_boot;

/* makecontext passes int arguments only, so the boot block's address comes in halves.
 * getcontext took the starting thread's floating-point environment, so the new
 * context's is put in force here. */
static void ld_ctx_boot_run(unsigned hi, unsigned lo)
{
    uintptr_t addr = ((uintptr_t)hi << 16 << 16) | (uintptr_t)lo;
    ld_ctx_boot *b = (ld_ctx_boot *)addr;
    fesetenv(b->fp);
    b->entry(b->arg);
}

/* The boot block sits at the top of the stack, and the context runs below it. */
void ld_ctx_start(void **save_sp, const ld_ctx *to, ld_ctx_entry entry, void *arg)
{
    uintptr_t top = (uintptr_t)to->sp & ~(uintptr_t)63;
    uintptr_t at = (top - sizeof(ld_ctx_boot)) & ~(uintptr_t)63;
    ld_ctx_boot *b = (ld_ctx_boot *)at;
    uint64_t wide = (uint64_t)at;

    getcontext(&b->uc);
    b->uc.uc_link = NULL;
    b->uc.uc_stack.ss_sp = to->uc_stack_lo;
    b->uc.uc_stack.ss_size = at - (uintptr_t)to->uc_stack_lo;
    b->fp = &to->fp;
    b->entry = entry;
    b->arg = arg;
    makecontext(&b->uc, (void (*)(void))ld_ctx_boot_run, 2, (unsigned)(wide >> 32),
                (unsigned)wide);
    ld_ctx_jump(save_sp, &b->uc);
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
