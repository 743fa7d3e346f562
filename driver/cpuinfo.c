/* cpuinfo.c: rank 0's CPU model and instruction-set flags, from /proc/cpuinfo. */
#include "cpuinfo.h"

#include <stdio.h>
#include <string.h>

/* The instruction-set flags that change how fast a kernel may run: a run's figures
 * are only comparable with runs that had the same. */
static const char *const cpu_flags_kept[] = {
    "sse2",     "sse4_2",   "avx",      "avx2",  "fma", "avx512f",
    "avx512dq", "avx512bw", "avx512vl", "asimd", "sve", NULL};

/* Whether the space-separated list `list` has the word w. */
static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

/* This CPU's model name and its kept flags, from /proc/cpuinfo ("" where it says
 * nothing, as off Linux). */
static void read_cpuinfo(char *model, size_t mlen, char *flags, size_t flen)
{
    model[0] = flags[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        const char *v = colon + 1 + (colon[1] == ' ');
        if (!model[0] && strncmp(line, "model name", 10) == 0)
            snprintf(model, mlen, "%.*s", (int)strcspn(v, "\n"), v);
        if (!flags[0] &&
            (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0))
            for (size_t k = 0; cpu_flags_kept[k]; k++)
                if (has_word(v, cpu_flags_kept[k]))
                    snprintf(flags + strlen(flags), flen - strlen(flags), "%s%s",
                             flags[0] ? "," : "", cpu_flags_kept[k]);
    }
    if (f)
        fclose(f);
}

void ld_cpuinfo_of_rank0(MPI_Comm comm, ld_cpuinfo *out)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0)
        read_cpuinfo(out->model, sizeof out->model, out->flags, sizeof out->flags);
    MPI_Bcast(out, sizeof *out, MPI_BYTE, 0, comm);
}
