/* settle_run.c: what every settle strategy's run shares: a trade's settlement, the
 * run's end with its services' figures, and a blocking wait. */
#include "settle.h"

#include "metrics.h"
#include "settle_db.h"
#include "settle_http.h"

#include <errno.h>
#include <time.h>

void ld_settle_finish(const ld_job_input *in, size_t i, int failed_check)
{
    ld_settle_result *out = in->results;
    out[i].latency_ns = ld_now_ns() - in->t0;
    out[i].status = failed_check >= 0 ? LD_FAILED : LD_SETTLED;
    out[i].failed_check = (int8_t)failed_check;
}

int ld_settle_end(const ld_job_input *in, int rc)
{
    ld_settle_http_figures(ld_settle_http_of(in), in->figures);
    ld_settle_db *db = ld_settle_db_of(in);
    return db ? ld_settle_db_end(db, in, rc) : rc;
}

void ld_settle_block_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
        ;
}
