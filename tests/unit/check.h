/* check.h: the unit tests' one assertion. CHECK counts a failure, says where and why,
 * and lets the test go on, so one run reports every broken case; main returns
 * failures != 0. */
#ifndef LD_TEST_CHECK_H
#define LD_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);              \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

#endif
