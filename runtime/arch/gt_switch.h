/* gt_switch.h: the context switch under the green threads (internal to runtime/).
 *
 * A context is a saved stack pointer. Switching pushes the callee-saved registers and
 * the floating-point control words onto the current stack, stores the stack pointer in
 * the `from` context, loads the `to` context's and pops the same set back. What the
 * ABI lets a call clobber is not saved, since ld_ctx_swap is an ordinary call.
 *
 * Two backends provide ld_ctx_frame and ld_ctx_jump: gt_switch_x86_64.S or
 * gt_switch_aarch64.S, and gt_switch_ucontext.c as the fallback. The inline functions
 * below wrap them with the ASan and TSan fiber annotations, so a sanitizer build sees
 * every switch; in other builds they reduce to the raw backend calls.
 *
 * A new context starts with the floating-point control words of the thread that made
 * it, as pthread_create gives a new thread the creator's floating-point environment.
 */
#ifndef LD_GT_SWITCH_H
#define LD_GT_SWITCH_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define LD_CTX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LD_CTX_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define LD_CTX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LD_CTX_TSAN 1
#endif
#endif

#ifdef LD_CTX_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef LD_CTX_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* Whether a switched-out context is just the bytes from its stack pointer up, so that
 * copy mode may move them out and back: true of the assembly backends only. */
#ifdef LD_CTX_UCONTEXT
#define LD_CTX_COPYABLE 0
#else
#define LD_CTX_COPYABLE 1
#endif

typedef void (*ld_ctx_entry)(void *arg);

typedef struct ld_ctx {
    void *sp; /* saved stack pointer while the context is switched out */
#ifdef LD_CTX_ASAN
    const void *stack_lo; /* the stack ASan is told about on a switch to here */
    size_t stack_size;
    void *fake_stack; /* ASan's fake-stack handle while switched out */
#endif
#ifdef LD_CTX_TSAN
    void *fiber;
#endif
} ld_ctx;

/* Backend: lay out a first frame at the top of [stack_lo, stack_lo + size) so that the
 * first jump to the returned stack pointer calls entry(arg) there. entry must never
 * return; it leaves for good with a last jump elsewhere. */
void *ld_ctx_frame(void *stack_lo, size_t size, ld_ctx_entry entry, void *arg);

/* Backend: save the running context, store its stack pointer in *save_sp and resume
 * the context whose stack pointer is load_sp. Returns when something jumps back. */
void ld_ctx_jump(void **save_sp, void *load_sp);

/* Backend: resume the context whose stack pointer is load_sp, saving nothing of the
 * running one, which must never be resumed. */
_Noreturn void ld_ctx_load(void *load_sp);

/* The calling thread's own context, the one a scheduler runs on. It needs no frame:
 * its first ld_ctx_swap away from it fills it in. */
static inline void ld_ctx_init_self(ld_ctx *c)
{
    c->sp = NULL;
#ifdef LD_CTX_ASAN
    c->stack_lo = NULL; /* learnt by ld_ctx_started, ASan knows the thread's stack */
    c->stack_size = 0;
    c->fake_stack = NULL;
#endif
#ifdef LD_CTX_TSAN
    c->fiber = __tsan_get_current_fiber();
#endif
}

/* What the sanitizers must know of a new context that will run on the given stack. */
static inline void ld_ctx_announce(ld_ctx *c, void *stack_lo, size_t size)
{
#ifdef LD_CTX_ASAN
    c->stack_lo = stack_lo;
    c->stack_size = size;
    c->fake_stack = NULL;
#else
    (void)stack_lo;
    (void)size;
#endif
#ifdef LD_CTX_TSAN
    c->fiber = __tsan_create_fiber(0);
#else
    (void)c;
#endif
}

/* A new context on the given stack, that will run entry(arg) when first switched to. */
static inline void ld_ctx_make(ld_ctx *c, void *stack_lo, size_t size, ld_ctx_entry entry,
                               void *arg)
{
    c->sp = ld_ctx_frame(stack_lo, size, entry, arg);
    ld_ctx_announce(c, stack_lo, size);
}

/* The bytes a first frame takes, rounded up to whole cache lines, as copy mode moves
 * it: 64 on x86-64, 176 on AArch64 (and anything else, whose frame is not copied). */
#if defined(__x86_64__)
#define LD_CTX_FRAME_MAX 64u
#else
#define LD_CTX_FRAME_MAX 192u
#endif

/* Copy mode: a new context for the stack [stack_lo, stack_lo + size), whose top is
 * 16-byte aligned, with its first frame built in the LD_CTX_FRAME_MAX bytes at
 * `frozen` (whose end is 16-byte aligned) instead: the caller copies all of them to
 * the top of the stack before the first switch. The frame holds no address of its own
 * stack, so it works wherever it lands. Here, as at any spawn, the new context gets
 * the control words of the thread that makes it. */
static inline void ld_ctx_make_frozen(ld_ctx *c, void *frozen, void *stack_lo,
                                      size_t size, ld_ctx_entry entry, void *arg)
{
    char *sp = ld_ctx_frame(frozen, LD_CTX_FRAME_MAX, entry, arg);

    c->sp = (char *)stack_lo + size - ((char *)frozen + LD_CTX_FRAME_MAX - sp);
    ld_ctx_announce(c, stack_lo, size);
}

/* First thing an entry function does: completes the switch that started it, and
 * records the stack of `from` (the context that switched here) for later switches. */
static inline void ld_ctx_started(ld_ctx *from)
{
#ifdef LD_CTX_ASAN
    const void *lo;
    size_t size;
    __sanitizer_finish_switch_fiber(NULL, &lo, &size);
    from->stack_lo = lo;
    from->stack_size = size;
#else
    (void)from;
#endif
}

/* Switch from the running context to `to`; returns when switched back to. */
static inline void ld_ctx_swap(ld_ctx *from, ld_ctx *to)
{
#ifdef LD_CTX_ASAN
    __sanitizer_start_switch_fiber(&from->fake_stack, to->stack_lo, to->stack_size);
#endif
#ifdef LD_CTX_TSAN
    __tsan_switch_to_fiber(to->fiber, 0);
#endif
    ld_ctx_jump(&from->sp, to->sp);
#ifdef LD_CTX_ASAN
    __sanitizer_finish_switch_fiber(from->fake_stack, NULL, NULL);
#endif
}

/* The last switch away from a context whose entry function is done: nothing of it is
 * saved. ASan frees its fake stack now; the stack itself may be reused once `to`
 * runs. Never returns. */
_Noreturn static inline void ld_ctx_leave(ld_ctx *to)
{
#ifdef LD_CTX_ASAN
    __sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#endif
#ifdef LD_CTX_TSAN
    __tsan_switch_to_fiber(to->fiber, 0);
#endif
    ld_ctx_load(to->sp);
}

/* Release what a context made by ld_ctx_make holds besides its stack (TSan's fiber).
 * Called from another context, after ld_ctx_leave left this one. */
static inline void ld_ctx_release(ld_ctx *c)
{
#ifdef LD_CTX_TSAN
    __tsan_destroy_fiber(c->fiber);
    c->fiber = NULL;
#else
    (void)c;
#endif
}

#endif
