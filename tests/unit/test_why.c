/* test_why.c: the run's reason (why.h): the first said is kept whole, one line, cut
 * to fit; later ones and empty ones are dropped; clear forgets it; and of threads
 * saying theirs at once, exactly one is kept, never a mix of two. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "why.h"

#define SAYERS 8
#define ROUNDS 200

static void check_first_kept(void)
{
    char got[LD_WHY_MAX];
    ld_why_clear();
    CHECK(ld_why_get(got, sizeof got) == 0 && got[0] == '\0', "nothing said: '%s'", got);
    CHECK(ld_why_say("%s", "") == 0, "an empty reason was kept");
    CHECK(ld_why_say("lost the database at %s: %s", "h:1/db", "closed\n\tmore") == 1,
          "the first reason was dropped");
    CHECK(ld_why_say("an echo") == 0, "a second reason was kept");
    ld_why_get(got, sizeof got);
    CHECK(strcmp(got, "lost the database at h:1/db: closed") == 0, "kept '%s'", got);
    char small[8];
    CHECK(ld_why_get(small, sizeof small) == 7 && strcmp(small, "lost th") == 0,
          "cut to 8 bytes: '%s'", small);
    ld_why_clear();
    CHECK(ld_why_get(got, sizeof got) == 0, "clear left '%s'", got);
}

static void check_long_cut(void)
{
    char big[2 * LD_WHY_MAX], got[LD_WHY_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ld_why_clear();
    ld_why_say("%s", big);
    CHECK(ld_why_get(got, sizeof got) == LD_WHY_MAX - 1, "kept %zu bytes", strlen(got));
}

static pthread_barrier_t start;

/* Each sayer's reason is its own letter, LD_WHY_MAX - 1 times. */
static void *sayer(void *arg)
{
    char line[LD_WHY_MAX];
    memset(line, 'a' + (int)(size_t)arg, sizeof line - 1);
    line[sizeof line - 1] = '\0';
    pthread_barrier_wait(&start);
    return (void *)(size_t)ld_why_say("%s", line);
}

static void check_racing_sayers(void)
{
    pthread_barrier_init(&start, NULL, SAYERS);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t t[SAYERS];
        size_t kept = 0;
        ld_why_clear();
        for (size_t i = 0; i < SAYERS; i++)
            pthread_create(&t[i], NULL, sayer, (void *)i);
        for (size_t i = 0; i < SAYERS; i++) {
            void *rc;
            pthread_join(t[i], &rc);
            kept += (size_t)rc;
        }
        char got[LD_WHY_MAX];
        size_t len = ld_why_get(got, sizeof got);
        size_t same = strspn(got, (char[]){got[0], '\0'});
        CHECK(kept == 1 && len == LD_WHY_MAX - 1 && same == len,
              "round %d: %zu kept, '%.*s...' of %zu bytes, %zu alike", round, kept, 8,
              got, len, same);
    }
    pthread_barrier_destroy(&start);
}

int main(void)
{
    check_first_kept();
    check_long_cut();
    check_racing_sayers();
    if (failures == 0)
        printf("why: the first reason kept whole and alone, cut to one line\n");
    return failures != 0;
}
