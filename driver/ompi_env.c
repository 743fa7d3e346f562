/* ompi_env.c: Open MPI's settings for loomdist's ranks, set before MPI_Init. */
#include "ompi_env.h"

#include <stdbool.h>
#include <stdlib.h>

/* What mpirun (OMPI_COMM_WORLD_SIZE, PMIX_RANK) and srun (PMIX_RANK under pmix,
 * PMI_RANK and PMI_FD under pmi2) put in each process's environment. */
static bool launched(void)
{
    static const char *const by[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                     "PMI_FD"};
    for (size_t i = 0; i < sizeof by / sizeof by[0]; i++)
        if (getenv(by[i]))
            return true;
    return false;
}

void ld_ompi_env_defaults(void)
{
    if (!getenv("OMPI_MCA_io"))
        setenv("OMPI_MCA_io_romio321_priority", "40", 0);
    if (launched())
        return;
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self", 0);
}
