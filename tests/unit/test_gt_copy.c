/* test_gt_copy.c: copy mode moves a green thread's frames out and back intact.
 *
 * - 300 threads on one carrier interleave, each parking at a depth of its own that
 *   changes from park to park (none, within a chunk's room, and kilobytes past it, so
 *   that the heap spill grows, shrinks in use and grows again); each checks after every
 *   resume that every byte of every frame it has live is what it wrote.
 * - A pointer a thread takes to its own local still points at the local after the
 *   thread has been frozen and thawed: frames come back at the address they left.
 * - Own mode is always there; copy mode is wherever the switch is in assembly, and a
 *   ucontext build refuses it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gt.h"

#include "check.h"

#define THREADS 300
#define ROUNDS 6

/* The byte thread t writes at offset i of the frame at level `level`. */
static unsigned char pattern(int t, int level, size_t i)
{
    return (unsigned char)(t * 31 + level * 7 + (int)i);
}

/* Bytes of frame at each level for thread t in round r: zero, small or large. */
static size_t frame_bytes(int t, int r)
{
    static const size_t sizes[] = {0, 96, 3000, 12000, 200};
    return sizes[(t + r) % (sizeof sizes / sizeof sizes[0])];
}

static long verified;

/* One frame of `bytes` filled with the pattern, then a yield below it at the bottom
 * of `levels` such frames, then the frame checked on the way back up. */
static __attribute__((noinline)) void nest(int t, int level, int levels, size_t bytes)
{
    unsigned char frame[bytes + 1]; /* sized to the round: depths differ */
    size_t i;

    for (i = 0; i < bytes; i++)
        frame[i] = pattern(t, level, i);
    if (level + 1 < levels)
        nest(t, level + 1, levels, bytes);
    else
        ld_gt_yield();
    for (i = 0; i < bytes; i++)
        if (frame[i] != pattern(t, level, i))
            break;
    CHECK(i == bytes, "thread %d level %d byte %zu of %zu lost", t, level, i, bytes);
    verified++;
}

static void worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int r;

    for (r = 0; r < ROUNDS; r++)
        nest(t, 0, 1 + (t + r) % 3, frame_bytes(t, r));
}

/* A local's address is the same, and so is its value, across a freeze and a thaw. */
static int pointer_ok;

static void pointer_keeper(void *arg)
{
    volatile uint64_t local = 0x1234567890abcdefull;
    volatile uint64_t *p = &local;

    (void)arg;
    ld_gt_sleep_ns(1000000);
    pointer_ok = p == &local && *p == 0x1234567890abcdefull;
}

static void pointer_rival(void *arg)
{
    volatile char scribble[4096];

    (void)arg;
    memset((char *)scribble, 0x5a, sizeof scribble); /* the shared stack, meanwhile */
}

static void run_copy(void (*spawn_all)(ld_sched *s))
{
    ld_sched_config cfg = {.stack_size = 64 * 1024, .mode = LD_STACK_COPY};
    ld_sched *s = NULL;
    int rc = ld_sched_create(&s, &cfg);

    CHECK(rc == 0, "ld_sched_create in copy mode: %d", rc);
    if (rc != 0)
        return;
    spawn_all(s);
    CHECK(ld_sched_run(s) == 0, "run");
    ld_sched_destroy(s);
}

static void spawn_workers(ld_sched *s)
{
    for (int t = 0; t < THREADS; t++)
        CHECK(ld_gt_spawn(s, worker, (void *)(intptr_t)t, NULL) == 0, "spawn %d", t);
}

static void spawn_pointer(ld_sched *s)
{
    CHECK(ld_gt_spawn(s, pointer_keeper, NULL, NULL) == 0, "spawn");
    CHECK(ld_gt_spawn(s, pointer_rival, NULL, NULL) == 0, "spawn");
}

int main(void)
{
    alarm(30);
    CHECK(ld_stack_mode_supported(LD_STACK_OWN), "own mode unsupported");
    if (!ld_stack_mode_supported(LD_STACK_COPY)) {
        /* A ucontext build: copy mode must be refused, not half-run. */
        ld_sched_config cfg = {.mode = LD_STACK_COPY};
        ld_sched *s = NULL;
        CHECK(ld_sched_create(&s, &cfg) == -ENOTSUP, "copy mode on ucontext not refused");
        return failures != 0;
    }
    run_copy(spawn_workers);
    CHECK(verified > THREADS * ROUNDS, "%ld frames verified", verified);
    run_copy(spawn_pointer);
    CHECK(pointer_ok, "a local moved or changed across a freeze");
    if (failures != 0) {
        fprintf(stderr, "test_gt_copy: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_copy: %ld frames came back intact\n", verified);
    return 0;
}
