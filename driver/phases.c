/* phases.c: the phase clock. No MPI: the driver and the simulation skeleton share it. */
#include "phases.h"

#include <time.h>

const char *const ld_phase_names[LD_PHASES] = {
    "startup", "checks", "book", "scatter", "prepare", "strategies", "gather", "write"};

int64_t ld_phases_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ld_phases_start(ld_phases *p, int64_t at)
{
    *p = (ld_phases){.mark = at};
}

void ld_phases_end(ld_phases *p, enum ld_phase k)
{
    int64_t now = ld_phases_now();
    p->ns[k] += now - p->mark;
    p->mark = now;
}

int64_t ld_phases_total(const ld_phases *p)
{
    int64_t sum = 0;
    for (int k = 0; k < LD_PHASES; k++)
        sum += p->ns[k];
    return sum;
}
