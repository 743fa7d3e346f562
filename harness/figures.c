/* figures.c: a strategy's named figures (job.h's ld_figures): adding one, and putting
 * one iteration's in the order of another's by name, so that the driver's reductions
 * and datasets, which take them by position, never add one figure to another. */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int ld_figure_add(ld_figures *f, const char *name, double value, const char *unit)
{
    if (f == NULL || f->n >= LD_FIGURES_MAX)
        return -ENOSPC;
    f->v[f->n++] = (ld_figure){.name = name, .value = value, .unit = unit};
    return 0;
}

/* The index of the first figure of f at or after `from` called name, or f->n. */
static size_t find_from(const ld_figures *f, size_t from, const char *name)
{
    while (from < f->n && strcmp(f->v[from].name, name) != 0)
        from++;
    return from;
}

/* Each figure is named by a name of its own, short enough to name a dataset. */
static int check_names(const ld_figures *f, char *why, size_t len)
{
    for (size_t k = 0; k < f->n; k++) {
        if (strlen(f->v[k].name) >= LD_FIGURE_NAME_MAX) {
            snprintf(why, len, "figure %.32s... has a name of %zu bytes, past %d",
                     f->v[k].name, strlen(f->v[k].name), LD_FIGURE_NAME_MAX - 1);
            return -EINVAL;
        }
        if (find_from(f, k + 1, f->v[k].name) < f->n) {
            snprintf(why, len, "figure %s is reported twice", f->v[k].name);
            return -EINVAL;
        }
    }
    return 0;
}

int ld_figures_order(ld_figures *f, const char *const *names, size_t n, char *why,
                     size_t len)
{
    int rc = check_names(f, why, len);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        size_t at = find_from(f, k, names[k]);
        if (at == f->n) {
            snprintf(why, len, "no figure %s", names[k]);
            return -EINVAL;
        }
        ld_figure moved = f->v[k];
        f->v[k] = f->v[at];
        f->v[at] = moved;
    }
    if (rc == 0 && f->n > n) {
        snprintf(why, len, "figure %s is not among the %zu expected", f->v[n].name, n);
        return -EINVAL;
    }
    return rc;
}
