/* why.c: the first reason a run failed, for the driver (why.h). */
#include "why.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One per process: the threads that may fail are many, the reader one. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char kept[LD_WHY_MAX];

void ld_why_clear(void)
{
    pthread_mutex_lock(&lock);
    kept[0] = '\0';
    pthread_mutex_unlock(&lock);
}

/* Formatted outside the lock, since a reason's arguments may be slow to print; the
 * line ends at the first newline (libpq's messages run on over several). */
int ld_why_say(const char *fmt, ...)
{
    char line[LD_WHY_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    line[strcspn(line, "\n")] = '\0';
    pthread_mutex_lock(&lock);
    int first = kept[0] == '\0' && line[0] != '\0';
    if (first)
        memcpy(kept, line, sizeof kept);
    pthread_mutex_unlock(&lock);
    return first;
}

size_t ld_why_get(char *out, size_t len)
{
    if (len == 0)
        return 0;
    pthread_mutex_lock(&lock);
    snprintf(out, len, "%s", kept);
    pthread_mutex_unlock(&lock);
    return strlen(out);
}
