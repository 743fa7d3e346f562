/* test_settle_floor.c: no trade settles sooner than its own plan allows, under any of
 * settle's strategies, in either stack mode.
 *
 * A trade's calls run one after another, so its latency can never be less than the sum
 * of its planned call latencies: a shorter one means a sleep or a deadline ended early,
 * or a latency was measured from the wrong start. Each strategy runs in process over
 * 3,000 trades of a book at latency scale 0.02 (calls of 20 µs to 3.2 ms) on two
 * carriers, so that many sleeps are added between two looks at the clock; every trade
 * must also settle with the plan's status and failed check. In copy mode a parked
 * trade's frames must fit its chunk's room (gt.h), with no freeze spilling past it:
 * the bytes a million parked trades cost rest on that.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "gt.h"
#include "metrics.h"
#include "settle.h"

#define TRADES 3000

/* Frames are as deep as the compiler makes them: the room was sized for x86-64's
 * optimized builds, and a sanitizer's (GCC's macros, clang's features) or -O0's frames
 * are deeper. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && defined(__OPTIMIZE__) && !defined(SANITIZED)
#define FRAMES_SIZED 1
#else
#define FRAMES_SIZED 0
#endif

#define SEED 20261202u

/* The figure named name of f, or -1 if f has none. */
static double figure(const ld_figures *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].name, name) == 0)
            return f->v[i].value;
    return -1;
}

/* The calls made by the trades that take the monitor under strategy s: a trade that
 * does parks in deeper frames than the rest, which may spill past a chunk's room. */
static size_t monitor_calls(const ld_strategy *s, const ld_settle_prepared *p)
{
    size_t calls = 0;

    if (strcmp(s->name, "green") == 0)
        return 0;
    for (size_t i = 0; i < TRADES; i++)
        for (int c = 0; p->plans[i].pinned && c < LD_SETTLE_CALLS; c++)
            calls += p->plans[i].ms[c] != 0;
    return calls;
}

/* Run strategy s once over the trades; check every trade against its plan. */
static void check_strategy(const ld_strategy *s, enum ld_stack_mode mode,
                           const ld_trade *trades, const ld_settle_config *sc)
{
    static ld_settle_result results[TRADES];
    ld_job_config cfg = {.seed = SEED,
                         .carriers = 2,
                         .workers = 2,
                         .stack_mode = mode,
                         .cold_stacks = 1,
                         .slow_factor = 1,
                         .opts = sc};
    const char *mode_name = mode == LD_STACK_COPY ? "copy" : "own";
    void *prepared;
    int64_t bound, slack_min = INT64_MAX;
    ld_metrics m;
    ld_figures fig;
    size_t early = 0, wrong = 0;

    CHECK(ld_settle_job.prepare(&cfg, trades, TRADES, &prepared, &bound) == 0,
          "%s: prepare", s->name);
    CHECK(ld_job_measure(&ld_settle_job, s, &cfg, trades, TRADES, prepared, results, &m,
                         &fig) == 0,
          "%s (%s): run", s->name, mode_name);
    const ld_settle_prepared *p = prepared;
    for (size_t i = 0; i < TRADES; i++) {
        const ld_settle_plan *plan = &p->plans[i];
        int64_t slack = results[i].latency_ns - ld_settle_plan_ns(plan, p->scale);
        if (slack < slack_min)
            slack_min = slack;
        early += slack < 0;
        wrong += results[i].status != plan->status ||
                 results[i].failed_check != plan->failed_check;
    }
    printf("%-14s %-4s least slack over the plan %8.1f us\n", s->name, mode_name,
           (double)slack_min / 1e3);
    CHECK(early == 0,
          "%s (%s): %zu trades settled before their plan allows, one by "
          "%" PRId64 " ns",
          s->name, mode_name, early, -slack_min);
    CHECK(wrong == 0, "%s (%s): %zu trades with another status than planned", s->name,
          mode_name, wrong);
    if (FRAMES_SIZED && mode == LD_STACK_COPY && strncmp(s->name, "green", 5) == 0)
        CHECK(figure(&fig, "stack_spills") >= 0 &&
                  figure(&fig, "stack_spills") <= (double)monitor_calls(s, p),
              "%s (copy): %.0f freezes spilled past a chunk's room, more than the %zu "
              "calls of trades in a monitor (-1: no figure)",
              s->name, figure(&fig, "stack_spills"), monitor_calls(s, p));
    ld_settle_job.release(prepared);
}

int main(void)
{
    static ld_trade trades[TRADES];
    ld_settle_config sc;

    ld_opt_defaults(ld_settle_job.opts, ld_settle_job.nopts, &sc);
    sc.latency_scale = 0.02;
    sc.fail_rate = 0.05;
    sc.pin_fraction = 0.1;
    ld_book_make(trades, TRADES, 0, SEED);
    for (size_t k = 0; k < ld_settle_job.nstrategies; k++) {
        const ld_strategy *s = &ld_settle_job.strategies[k];
        check_strategy(s, LD_STACK_OWN, trades, &sc);
        if (s->threading == LD_ON_CARRIERS && ld_stack_mode_supported(LD_STACK_COPY))
            check_strategy(s, LD_STACK_COPY, trades, &sc);
    }
    return failures != 0;
}
