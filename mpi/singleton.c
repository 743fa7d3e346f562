/* singleton.c: Open MPI's defaults for a rank that no launcher started. */
#include "singleton.h"

#include <stdlib.h>

/* What mpirun (OMPI_COMM_WORLD_SIZE, PMIX_RANK) and srun (PMIX_RANK under pmix,
 * PMI_RANK and PMI_FD under pmi2) put in each process's environment. */
static const char *const launched_by[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                          "PMI_FD"};

void ld_singleton_defaults(void)
{
    for (size_t i = 0; i < sizeof launched_by / sizeof launched_by[0]; i++)
        if (getenv(launched_by[i]))
            return;
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self", 0);
}
