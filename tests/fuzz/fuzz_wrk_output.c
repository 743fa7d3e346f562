/* fuzz_wrk_output.c: arbitrary text into ld_load_parse (jobs/pool/pool_load.h), which
 * reads what wrk or loomdist-load printed into the pool job's figures. The first byte
 * of an input picks the tool; the rest is its output.
 *
 * What must hold for every input, or the harness aborts:
 * - the parse gives 0 or -EPROTO, and the same result twice;
 * - a result has a window of seconds that is finite and not negative, and latencies
 *   that are not negative: no figure the job records comes from a number the tool
 *   could not have meant.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_load.h"

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_wrk_output: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ld_load_result a, b;

    if (size == 0)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    enum ld_load_tool tool = data[0] & 1 ? LD_LOAD_BUILTIN : LD_LOAD_WRK;
    int ra = ld_load_parse(tool, text, &a);
    int rb = ld_load_parse(tool, text, &b);
    require(ra == 0 || ra == -EPROTO, "a result not documented");
    require(ra == rb && (ra != 0 || memcmp(&a, &b, sizeof a) == 0),
            "two parses of one output disagree");
    if (ra == 0) {
        require(isfinite(a.seconds) && a.seconds >= 0,
                "a window not finite, or negative");
        require(a.p50_ns >= 0 && a.p90_ns >= 0 && a.p99_ns >= 0 && a.max_ns >= 0,
                "a negative latency");
    }
    free(text);
    return 0;
}
