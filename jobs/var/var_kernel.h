/* var_kernel.h: one trade's Monte Carlo Value-at-Risk, the kernel of every var strategy.
 *
 * sims one-day GBM draws sim = price*exp((mu - sigma^2/2) + sigma*z), P&L =
 * notional*(sim - price)/price, and VaR = -pnl[k] with k = (1 - 0.95)*sims, the k-th
 * smallest P&L (0-based). The draws z come from the trade's LD_STREAM_VAR stream, so
 * a trade's VaR is bit-identical wherever and however it is computed.
 */
#ifndef LD_VAR_KERNEL_H
#define LD_VAR_KERNEL_H

#include <stdint.h>

#include "book.h"

#define LD_VAR_DRIFT 0.0002
#define LD_VAR_VOL 0.02
#define LD_VAR_CONFIDENCE 0.95

enum ld_var_kernel {
    LD_VAR_SORT = 0,   /* the study's algorithm: sort every P&L, take the k-th */
    LD_VAR_SELECT = 1, /* the same order statistic found by selection, no full sort */
};

/* The instruction sets the kernel's vector loops have a copy for. Every path gives the
 * same bits; only the speed differs. */
enum ld_var_path {
    LD_VAR_PATH_GENERIC = 0, /* the baseline of the build's target (SSE2 on x86-64) */
    LD_VAR_PATH_AVX2 = 1,
    LD_VAR_PATH_AVX512 = 2, /* AVX-512 F and DQ */
    LD_VAR_PATHS = 3,
};

/* The path this process takes: the widest the CPU runs, chosen on the first call.
 * Tests may name one in the environment variable LD_VAR_PATH (generic, avx2 or
 * avx512) to compare them; a path the CPU cannot run is never taken. */
enum ld_var_path ld_var_path(void);

/* The VaR of trade t, in currency units (dollars). scratch holds at least sims doubles
 * and is overwritten by either kernel; sims must be at least 1. The sort kernel
 * allocates a second buffer of sims doubles for itself. NaN for a NULL argument, sims
 * of 0, an unknown kernel, or when that buffer cannot be allocated. */
double ld_var_trade(const ld_trade *t, uint64_t seed, uint32_t sims,
                    enum ld_var_kernel kernel, double *scratch);

/* The order-statistic half of ld_var_trade: the k-th smallest (0-based) of pnl[0..n),
 * k < n, which must hold no NaN. LD_VAR_SORT leaves pnl sorted ascending;
 * LD_VAR_SELECT leaves it partitioned, smaller values before pnl[k] and larger after.
 * NaN in the same cases as ld_var_trade. */
double ld_var_order_stat(double *pnl, uint32_t n, uint32_t k, enum ld_var_kernel kernel);

/* ld_var_trade's steps, for a caller that pauses between them (the mixed job's
 * shared-yield): the trade's draws fill z from its LD_STREAM_VAR stream (ld_pcg32_
 * normal_fill, in pieces or at once), ld_var_pnl turns z[0..n) into their P&L in
 * place, any piece alone, and the VaR is then -ld_var_order_stat(z, sims,
 * ld_var_index(sims), kernel), bit for bit ld_var_trade's for either kernel. */
void ld_var_pnl(double *z, uint32_t n, const ld_trade *t);
uint32_t ld_var_index(uint32_t sims);

/* The closed-form one-day GBM VaR of t at the same confidence, for checking. */
double ld_var_closed_form(const ld_trade *t);

#endif
