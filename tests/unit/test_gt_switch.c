/* test_gt_switch.c: the context switch keeps what the ABI says a call keeps.
 *
 * - Two green threads ping-pong through ld_gt_yield and must strictly alternate.
 * - Every callee-saved register, loaded with a distinct pattern by an assembly helper,
 *   must come back intact from a yield while another thread loads its own patterns.
 * - Floating-point control state (rounding mode, and MXCSR's flush-to-zero on x86-64)
 *   belongs to each green thread; a new thread inherits its creator's.
 * - A thread may use most of its stack.
 */
#include <fenv.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gt.h"

#if defined(__has_include)
/* cppcheck cannot evaluate __has_include. */
// cppcheck-suppress preprocessorErrorDirective
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define ON_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef ON_VALGRIND
#define ON_VALGRIND() 0
#endif

#include "check.h"
#include "mode.h"

/* Create a scheduler, let setup spawn on it, run it dry, destroy it. */
static void run_sched(size_t stack_size, void (*setup)(ld_sched *s))
{
    ld_sched *s = NULL;
    ld_sched_config cfg = test_config(stack_size);
    int rc = ld_sched_create(&s, &cfg);

    CHECK(rc == 0, "ld_sched_create: %d", rc);
    if (rc != 0)
        return;
    setup(s);
    rc = ld_sched_run(s);
    CHECK(rc == 0, "ld_sched_run: %d", rc);
    ld_sched_destroy(s);
}

/* --- ping-pong -------------------------------------------------------------------- */

#define PINGPONG_ROUNDS 200000

static long pingpong_turn;

/* Thread `parity` may only run when the turn count has its parity. */
static void pingpong_player(void *arg)
{
    long parity = (long)(intptr_t)arg;
    long i;

    for (i = 0; i < PINGPONG_ROUNDS; i++) {
        if (pingpong_turn % 2 != parity) {
            CHECK(0, "player %ld ran out of turn at %ld", parity, pingpong_turn);
            return;
        }
        pingpong_turn++;
        ld_gt_yield();
    }
}

static void pingpong_setup(ld_sched *s)
{
    CHECK(ld_gt_spawn(s, pingpong_player, (void *)(intptr_t)0, NULL) == 0, "spawn");
    CHECK(ld_gt_spawn(s, pingpong_player, (void *)(intptr_t)1, NULL) == 0, "spawn");
}

static void test_pingpong(void)
{
    pingpong_turn = 0;
    run_sched(0, pingpong_setup);
    CHECK(pingpong_turn == 2L * PINGPONG_ROUNDS, "turns %ld", pingpong_turn);
}

/* --- callee-saved registers ------------------------------------------------------- */

/* test_regs_across(fn, seed, out) loads seed + i into the i-th callee-saved register,
 * calls fn(), then stores every one of them into out[i]. */
#if defined(__x86_64__)
#define REGS_N 6 /* rbx, rbp, r12, r13, r14, r15 */
__asm__(".text\n"
        ".globl test_regs_across\n"
        ".hidden test_regs_across\n"
        ".type test_regs_across, @function\n"
        "test_regs_across:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  pushq %rdx\n" /* out; seven pushes leave rsp 16-byte aligned for the call */
        "  movq %rdi, %rax\n"
        "  leaq 0(%rsi), %rbx\n"
        "  leaq 1(%rsi), %rbp\n"
        "  leaq 2(%rsi), %r12\n"
        "  leaq 3(%rsi), %r13\n"
        "  leaq 4(%rsi), %r14\n"
        "  leaq 5(%rsi), %r15\n"
        "  call *%rax\n"
        "  popq %rdx\n"
        "  movq %rbx, 0(%rdx)\n"
        "  movq %rbp, 8(%rdx)\n"
        "  movq %r12, 16(%rdx)\n"
        "  movq %r13, 24(%rdx)\n"
        "  movq %r14, 32(%rdx)\n"
        "  movq %r15, 40(%rdx)\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size test_regs_across, .-test_regs_across\n");
#elif defined(__aarch64__)
#define REGS_N 18 /* x19..x28, d8..d15 */
__asm__(".text\n"
        ".globl test_regs_across\n"
        ".hidden test_regs_across\n"
        ".type test_regs_across, %function\n"
        "test_regs_across:\n"
        "  sub sp, sp, #176\n"
        "  stp x19, x20, [sp, #0]\n"
        "  stp x21, x22, [sp, #16]\n"
        "  stp x23, x24, [sp, #32]\n"
        "  stp x25, x26, [sp, #48]\n"
        "  stp x27, x28, [sp, #64]\n"
        "  stp x29, x30, [sp, #80]\n"
        "  stp d8, d9, [sp, #96]\n"
        "  stp d10, d11, [sp, #112]\n"
        "  stp d12, d13, [sp, #128]\n"
        "  stp d14, d15, [sp, #144]\n"
        "  str x2, [sp, #160]\n"
        "  mov x9, x0\n"
        "  add x19, x1, #0\n"
        "  add x20, x1, #1\n"
        "  add x21, x1, #2\n"
        "  add x22, x1, #3\n"
        "  add x23, x1, #4\n"
        "  add x24, x1, #5\n"
        "  add x25, x1, #6\n"
        "  add x26, x1, #7\n"
        "  add x27, x1, #8\n"
        "  add x28, x1, #9\n"
        "  add x10, x1, #10\n"
        "  fmov d8, x10\n"
        "  add x10, x1, #11\n"
        "  fmov d9, x10\n"
        "  add x10, x1, #12\n"
        "  fmov d10, x10\n"
        "  add x10, x1, #13\n"
        "  fmov d11, x10\n"
        "  add x10, x1, #14\n"
        "  fmov d12, x10\n"
        "  add x10, x1, #15\n"
        "  fmov d13, x10\n"
        "  add x10, x1, #16\n"
        "  fmov d14, x10\n"
        "  add x10, x1, #17\n"
        "  fmov d15, x10\n"
        "  blr x9\n"
        "  ldr x2, [sp, #160]\n"
        "  stp x19, x20, [x2, #0]\n"
        "  stp x21, x22, [x2, #16]\n"
        "  stp x23, x24, [x2, #32]\n"
        "  stp x25, x26, [x2, #48]\n"
        "  stp x27, x28, [x2, #64]\n"
        "  stp d8, d9, [x2, #80]\n"
        "  stp d10, d11, [x2, #96]\n"
        "  stp d12, d13, [x2, #112]\n"
        "  stp d14, d15, [x2, #128]\n"
        "  ldp x19, x20, [sp, #0]\n"
        "  ldp x21, x22, [sp, #16]\n"
        "  ldp x23, x24, [sp, #32]\n"
        "  ldp x25, x26, [sp, #48]\n"
        "  ldp x27, x28, [sp, #64]\n"
        "  ldp x29, x30, [sp, #80]\n"
        "  ldp d8, d9, [sp, #96]\n"
        "  ldp d10, d11, [sp, #112]\n"
        "  ldp d12, d13, [sp, #128]\n"
        "  ldp d14, d15, [sp, #144]\n"
        "  add sp, sp, #176\n"
        "  ret\n"
        ".size test_regs_across, .-test_regs_across\n");
#endif

#ifdef REGS_N
void test_regs_across(void (*fn)(void), uint64_t seed, uint64_t *out);

#define REGS_ROUNDS 10000

/* Each thread loads patterns of its own (seeds far apart) and yields inside. */
static void regs_player(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg << 32;
    uint64_t out[REGS_N];
    int round, i;

    for (round = 0; round < REGS_ROUNDS; round++) {
        memset(out, 0, sizeof out);
        test_regs_across(ld_gt_yield, seed + (uint64_t)round * 64, out);
        for (i = 0; i < REGS_N; i++) {
            uint64_t want = seed + (uint64_t)round * 64 + (uint64_t)i;
            if (out[i] != want) {
                CHECK(0, "register %d: %#llx, want %#llx", i, (unsigned long long)out[i],
                      (unsigned long long)want);
                return;
            }
        }
    }
}

static void regs_setup(ld_sched *s)
{
    uintptr_t t;

    for (t = 1; t <= 3; t++)
        CHECK(ld_gt_spawn(s, regs_player, (void *)t, NULL) == 0, "spawn");
}

static void test_callee_saved(void)
{
    run_sched(0, regs_setup);
}
#else
static void test_callee_saved(void)
{
    fprintf(stderr, "test_callee_saved: no register helper for this architecture\n");
}
#endif

/* --- floating-point control ------------------------------------------------------- */

#define FP_ROUNDS 1000

#if defined(__x86_64__)
#define MXCSR_FTZ 0x8000u
#define MXCSR_RC 0x6000u
#define X87_RC 0x0c00u

/* The flush-to-zero bit the rounding-down thread sets: none under valgrind, which
 * cannot emulate it. */
static unsigned fp_ftz;

static unsigned fp_mxcsr(void)
{
    unsigned v;
    __asm__ volatile("stmxcsr %0" : "=m"(v));
    return v;
}

static void fp_set_mxcsr(unsigned v)
{
    __asm__ volatile("ldmxcsr %0" : : "m"(v));
}

static unsigned fp_x87cw(void)
{
    unsigned short v;
    __asm__ volatile("fnstcw %0" : "=m"(v));
    return v;
}
#endif

static volatile double fp_one = 1.0, fp_three = 3.0;
static double fp_third_down, fp_third_up;
static int fp_child_mode;

/* Spawned by the rounding-down thread: it starts with its creator's mode. */
static void fp_child(void *arg)
{
    (void)arg;
    fp_child_mode = fegetround();
}

static void fp_down(void *arg)
{
    ld_sched *s = arg;
    int i;

    CHECK(fegetround() == FE_TONEAREST, "initial mode %d", fegetround());
    fesetround(FE_DOWNWARD);
#if defined(__x86_64__)
    fp_set_mxcsr(fp_mxcsr() | fp_ftz);
#endif
    CHECK(ld_gt_spawn(s, fp_child, NULL, NULL) == 0, "spawn");
    for (i = 0; i < FP_ROUNDS; i++) {
        ld_gt_yield();
        CHECK(fegetround() == FE_DOWNWARD, "round %d: mode %d", i, fegetround());
#if defined(__x86_64__)
        CHECK((fp_mxcsr() & (MXCSR_FTZ | MXCSR_RC)) == (fp_ftz | 0x2000u),
              "round %d: MXCSR %#x", i, fp_mxcsr());
        CHECK((fp_x87cw() & X87_RC) == 0x0400u, "round %d: x87 CW %#x", i, fp_x87cw());
#endif
        fp_third_down = fp_one / fp_three;
    }
}

static void fp_up(void *arg)
{
    int i;

    (void)arg;
    CHECK(fegetround() == FE_TONEAREST, "initial mode %d", fegetround());
    fesetround(FE_UPWARD);
    for (i = 0; i < FP_ROUNDS; i++) {
        ld_gt_yield();
        CHECK(fegetround() == FE_UPWARD, "round %d: mode %d", i, fegetround());
#if defined(__x86_64__)
        CHECK((fp_mxcsr() & (MXCSR_FTZ | MXCSR_RC)) == 0x4000u, "round %d: MXCSR %#x", i,
              fp_mxcsr());
        CHECK((fp_x87cw() & X87_RC) == 0x0800u, "round %d: x87 CW %#x", i, fp_x87cw());
#endif
        fp_third_up = fp_one / fp_three;
    }
}

static void fp_setup(ld_sched *s)
{
    CHECK(ld_gt_spawn(s, fp_down, s, NULL) == 0, "spawn");
    CHECK(ld_gt_spawn(s, fp_up, NULL, NULL) == 0, "spawn");
}

static void test_fp_control(void)
{
    fp_child_mode = -1;
#if defined(__x86_64__)
    fp_ftz = ON_VALGRIND() ? 0 : MXCSR_FTZ;
#endif
    run_sched(0, fp_setup);
    CHECK(fegetround() == FE_TONEAREST, "carrier's mode changed to %d", fegetround());
#if defined(__x86_64__)
    CHECK((fp_mxcsr() & (MXCSR_FTZ | MXCSR_RC)) == 0, "carrier's MXCSR %#x", fp_mxcsr());
#endif
    /* valgrind rounds SSE arithmetic to nearest whatever MXCSR says */
    CHECK(ON_VALGRIND() || fp_third_down < fp_third_up,
          "1/3 rounded down %.17g, up %.17g", fp_third_down, fp_third_up);
    CHECK(fp_child_mode == FE_DOWNWARD, "child started in mode %d", fp_child_mode);
}

/* --- stack depth ------------------------------------------------------------------ */

static int deep_done;

/* 56 KiB of a 64 KiB stack, written end to end. */
static void deep_user(void *arg)
{
    volatile unsigned char buf[56 * 1024];
    size_t i;
    unsigned sum = 0;

    (void)arg;
    for (i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)i;
    ld_gt_yield();
    for (i = 0; i < sizeof buf; i++)
        sum += buf[i] == (unsigned char)i;
    deep_done = sum == sizeof buf;
}

static void deep_setup(ld_sched *s)
{
    CHECK(ld_gt_spawn(s, deep_user, NULL, NULL) == 0, "spawn");
    CHECK(ld_gt_spawn(s, deep_user, NULL, NULL) == 0, "spawn");
}

static void test_deep_stack(void)
{
    deep_done = 0;
    run_sched(64 * 1024, deep_setup);
    CHECK(deep_done == 1, "stack contents lost across a yield");
}

int main(int argc, char **argv)
{
    test_mode_from_args(argc, argv);
    alarm(30); /* a hang fails the test instead of waiting for CTest's timeout */
    test_pingpong();
    test_callee_saved();
    test_fp_control();
    test_deep_stack();
    if (failures != 0) {
        fprintf(stderr, "test_gt_switch: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_switch: ok\n");
    return 0;
}
