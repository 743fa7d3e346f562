/* mode.h: the stack mode a scheduler test runs in. CTest runs each such test twice,
 * with no argument (LD_STACK_OWN) and with "copy" (LD_STACK_COPY), so every case holds
 * in both. */
#ifndef LD_TEST_MODE_H
#define LD_TEST_MODE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt.h"

static enum ld_stack_mode test_mode = LD_STACK_OWN;

/* From argv[1]; anything but "copy" or nothing is a usage error: exit status 2. A
 * build that cannot copy stacks (ucontext) skips the copy run: status 77, which CTest
 * reports as skipped. */
static inline void test_mode_from_args(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "copy") == 0) {
        test_mode = LD_STACK_COPY;
        if (!ld_stack_mode_supported(LD_STACK_COPY)) {
            printf("%s: skipped: this build's context switch cannot copy stacks\n",
                   argv[0]);
            exit(77);
        }
    } else if (argc > 1) {
        fprintf(stderr, "usage: %s [copy]\n", argv[0]);
        exit(2);
    }
}

/* A scheduler config of the test's mode; stack_size 0 is the default. */
static inline ld_sched_config test_config(size_t stack_size)
{
    ld_sched_config cfg = {.stack_size = stack_size, .mode = test_mode};
    return cfg;
}

/* ld_sched_create with the test's mode and default sizes. */
static inline int test_sched_create(ld_sched **out)
{
    ld_sched_config cfg = test_config(0);
    return ld_sched_create(out, &cfg);
}

#endif
