/* gt_switch.h: the context switch under the green threads (internal to runtime/).
 *
 * A context is a saved stack pointer. Switching pushes the callee-saved registers and
 * the floating-point control words onto the current stack, stores the stack pointer in
 * the `from` context, loads the `to` context's and pops the same set back. What the
 * ABI lets a call clobber is not saved, since ld_ctx_swap is an ordinary call.
 *
 * A new context has no frame: its first switch, ld_ctx_start, calls its entry function
 * at the top of its stack, so nothing is built for it before it runs, and copy mode
 * has nothing to move for it. Two backends provide ld_ctx_start, ld_ctx_jump and
 * ld_ctx_load: gt_switch_x86_64.S or gt_switch_aarch64.S, and gt_switch_ucontext.c as
 * the fallback. The inline functions below wrap them with the ASan and TSan fiber
 * annotations, so a sanitizer build sees every switch; in other builds they reduce to
 * the raw backend calls.
 *
 * A new context starts with the floating-point control words of the thread that made
 * it, as pthread_create gives a new thread the creator's floating-point environment:
 * the spawner reads them (ld_ctx_fp_save, once for a batch of spawns), ld_ctx_make
 * keeps them, and ld_ctx_start puts them in force.
 */
#ifndef LD_GT_SWITCH_H
#define LD_GT_SWITCH_H

#include <stddef.h>
#include <stdint.h>
#if defined(LD_CTX_UCONTEXT) || !(defined(__x86_64__) || defined(__aarch64__))
#include <fenv.h>
#endif

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

/* The floating-point control words a new context starts with, and how to read the
 * ones in force: MXCSR and the x87 control word on x86-64, FPCR on AArch64, read
 * where the assembly backends load them; the whole environment through <fenv.h> for
 * the ucontext backend. */
#if defined(__x86_64__) && !defined(LD_CTX_UCONTEXT)
typedef struct ld_ctx_fp {
    uint32_t mxcsr;
    uint16_t x87;
} ld_ctx_fp;

static inline void ld_ctx_fp_save(ld_ctx_fp *fp)
{
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(fp->mxcsr), "=m"(fp->x87));
}
#elif defined(__aarch64__) && !defined(LD_CTX_UCONTEXT)
typedef uint64_t ld_ctx_fp;

static inline void ld_ctx_fp_save(ld_ctx_fp *fp)
{
    __asm__ volatile("mrs %0, fpcr" : "=r"(*fp));
}
#else
typedef fenv_t ld_ctx_fp;

static inline void ld_ctx_fp_save(ld_ctx_fp *fp)
{
    fegetenv(fp);
}
#endif

/* A context's control words are read once, by its first switch (ld_ctx_start); from
 * then on their bytes are the owner's to keep something of its own in (`spare`), so
 * a green thread's struct fits one cache line. */
typedef struct ld_ctx {
    void *sp; /* saved stack pointer while switched out; a new context's stack top */
    union {
        ld_ctx_fp fp; /* a new context's control words, at offset 8 for the assembly */
        uint32_t spare[2]; /* once it has started: the owner's */
    };
#ifdef LD_CTX_UCONTEXT
    void *uc_stack_lo; /* a new context's lowest stack byte, which makecontext needs */
#endif
#ifdef LD_CTX_ASAN
    const void *stack_lo; /* the stack ASan is told about on a switch to here */
    size_t stack_size;
    void *fake_stack; /* ASan's fake-stack handle while switched out */
#endif
#ifdef LD_CTX_TSAN
    void *fiber;
#endif
} ld_ctx;

#if LD_CTX_COPYABLE
_Static_assert(offsetof(ld_ctx, fp) == 8, "the assembly reads a new context's fp at 8");
#endif

/* Backend: save the running context as ld_ctx_jump does, its stack pointer in
 * *save_sp, and start the new context `to` (ld_ctx_make): entry(arg) is called at the
 * top of its stack, with its control words in force. entry must never return; it
 * leaves for good with a last jump elsewhere. Returns when something jumps back. */
void ld_ctx_start(void **save_sp, const ld_ctx *to, ld_ctx_entry entry, void *arg);

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

/* A new context on the stack [stack_lo, top), top 16-byte aligned, that starts with
 * the control words fp (the spawner's, read by ld_ctx_fp_save): it runs its entry
 * function when first switched to by ld_ctx_begin. Nothing is written on the stack:
 * copy mode's threads share one and the frame of each is laid out only as it starts. */
static inline void ld_ctx_make(ld_ctx *c, void *stack_lo, void *top, const ld_ctx_fp *fp)
{
    c->sp = top;
    c->fp = *fp;
#ifdef LD_CTX_UCONTEXT
    c->uc_stack_lo = stack_lo;
#endif
    ld_ctx_announce(c, stack_lo, (size_t)((char *)top - (char *)stack_lo));
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

/* The first switch to a context made by ld_ctx_make, which runs entry(arg) there;
 * returns when switched back to, as ld_ctx_swap does. */
static inline void ld_ctx_begin(ld_ctx *from, const ld_ctx *to, ld_ctx_entry entry,
                                void *arg)
{
#ifdef LD_CTX_ASAN
    __sanitizer_start_switch_fiber(&from->fake_stack, to->stack_lo, to->stack_size);
#endif
#ifdef LD_CTX_TSAN
    __tsan_switch_to_fiber(to->fiber, 0);
#endif
    ld_ctx_start(&from->sp, to, entry, arg);
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
