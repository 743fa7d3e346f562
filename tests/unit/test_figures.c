/* test_figures.c: figures matched by name (ld_figures_order): one iteration's figures
 * put in another's order keep each value with its own name, whatever order they were
 * added in; one missing, one more, one repeated or one named past LD_FIGURE_NAME_MAX
 * is refused with a line naming it. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "job.h"

static const char *const order[] = {"tasks", "sum", "peak"};

/* f holds exactly order's figures, in order's order, each with value want[k]. */
static void check_lined_up(const ld_figures *f, const double *want)
{
    CHECK(f->n == LD_LEN(order), "%zu figures, not %zu", f->n, LD_LEN(order));
    for (size_t k = 0; k < f->n && k < LD_LEN(order); k++)
        CHECK(strcmp(f->v[k].name, order[k]) == 0 && f->v[k].value == want[k] &&
                  strcmp(f->v[k].unit, order[k]) == 0,
              "figure %zu is %s = %g (%s)", k, f->v[k].name, f->v[k].value, f->v[k].unit);
}

static void check_any_order(void)
{
    static const double want[] = {1000, 499500, 7};
    static const size_t perms[][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}};
    for (size_t p = 0; p < LD_LEN(perms); p++) {
        ld_figures f = {0};
        for (size_t k = 0; k < 3; k++) {
            size_t at = perms[p][k];
            ld_figure_add(&f, order[at], want[at], order[at]);
        }
        char why[128] = "";
        CHECK(ld_figures_order(&f, order, LD_LEN(order), why, sizeof why) == 0,
              "permutation %zu refused: %s", p, why);
        check_lined_up(&f, want);
    }
}

/* figs[0..n) added in turn are refused against order with why equal to want. */
static void check_refused(const char *const *figs, size_t n, const char *want)
{
    ld_figures f = {0};
    for (size_t k = 0; k < n; k++)
        ld_figure_add(&f, figs[k], (double)k, "");
    char why[128] = "";
    int rc = ld_figures_order(&f, order, LD_LEN(order), why, sizeof why);
    CHECK(rc == -EINVAL && strcmp(why, want) == 0, "rc %d, why '%s', not '%s'", rc, why,
          want);
}

static void check_refusals(void)
{
    static const char *const missing[] = {"peak", "tasks"};
    check_refused(missing, LD_LEN(missing), "no figure sum");
    static const char *const more[] = {"sum", "extra", "peak", "tasks"};
    check_refused(more, LD_LEN(more), "figure extra is not among the 3 expected");
    static const char *const twice[] = {"sum", "tasks", "peak", "sum"};
    check_refused(twice, LD_LEN(twice), "figure sum is reported twice");
    static const char *const renamed[] = {"tasks", "sums", "peak"};
    check_refused(renamed, LD_LEN(renamed), "no figure sum");
    char long_name[LD_FIGURE_NAME_MAX + 1];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    const char *const too_long[] = {"tasks", "sum", "peak", long_name};
    check_refused(too_long, LD_LEN(too_long),
                  "figure xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... has a name of 64 bytes, "
                  "past 63");
}

int main(void)
{
    check_any_order();
    check_refusals();
    ld_figures none = {0};
    char why[64] = "";
    CHECK(ld_figures_order(&none, order, 0, why, sizeof why) == 0, "none refused: %s",
          why);
    return failures != 0;
}
