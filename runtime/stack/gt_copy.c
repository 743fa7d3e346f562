/* gt_copy.c: copy mode's run stacks, and freezing and thawing the frames of the green
 * threads that share one (see gt_copy.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gt_copy.h"
#include "gt_switch.h"

#ifdef LD_STACK_VALGRIND
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#endif
#ifdef LD_CTX_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Whether memcheck watches the process: only it needs telling which run-stack bytes a
 * copy makes addressable, and asking costs a dozen instructions a copy everywhere
 * else, natively too. Memcheck answers the request -1, other tools and none 0. Under
 * ASan, or memcheck, no copy is plain (gt_copy.h). */
static pthread_once_t copy_once = PTHREAD_ONCE_INIT;
static int copy_memcheck;
uint32_t ld_copy_plain_max;

static void copy_probe(void)
{
#ifdef LD_STACK_VALGRIND
    copy_memcheck = VALGRIND_MAKE_MEM_UNDEFINED(&copy_memcheck, 0) != 0;
#endif
#ifdef LD_CTX_ASAN
    ld_copy_plain_max = 0;
#else
    ld_copy_plain_max = copy_memcheck ? 0 : LD_STACK_CHUNK_ROOM;
#endif
}

/* One stack for all of a scheduler's threads: two VMAs per carrier need no budget. */
int ld_copy_run_map(ld_stack *run, size_t size)
{
    size_t page = ld_stack_page();
    char *base;

    pthread_once(&copy_once, copy_probe);

    if (size > LD_STACK_SIZE_MAX)
        return -EINVAL;
    size = (size + page - 1) / page * page;
    base = mmap(NULL, page + size, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED)
        return -errno;
    if (mprotect(base, page, PROT_NONE) != 0) {
        int rc = -errno;
        munmap(base, page + size);
        return rc;
    }
    ld_stack_unpoison_fresh(base + page, size);
    run->lo = base + page;
    run->size = size;
    run->guard = LD_GUARD_SHARED;
#ifdef LD_STACK_VALGRIND
    run->vg_id = VALGRIND_STACK_REGISTER(run->lo, base + page + size);
#endif
    return 0;
}

void ld_copy_run_unmap(ld_stack *run)
{
    size_t page = ld_stack_page();

#ifdef LD_STACK_VALGRIND
    VALGRIND_STACK_DEREGISTER(run->vg_id);
#endif
    munmap((char *)run->lo - page, page + run->size);
    run->lo = NULL;
}

/* ASan keeps the redzones of live frames poisoned, and the next thread's frames land
 * elsewhere: the region is cleared before it is copied either way. The frames of a
 * thread that was frozen lose their redzones until they return; nothing else does. */
static void run_unpoison(const void *lo, size_t len)
{
#ifdef LD_CTX_ASAN
    ASAN_UNPOISON_MEMORY_REGION(lo, len);
#else
    (void)lo;
    (void)len;
#endif
}

/* Memcheck marks what a stack pops unaddressable, but the scheduler copies frames in
 * below another thread's old stack pointer, and out from the line below its own:
 * make such bytes addressable, undefined until the copy brings their definedness. */
static void run_addressable(const void *lo, size_t len)
{
#ifdef LD_STACK_VALGRIND
    if (copy_memcheck)
        VALGRIND_MAKE_MEM_UNDEFINED(lo, len);
#else
    (void)lo;
    (void)len;
#endif
}

/* Nothing in the spill is live, so a larger one is a new allocation, not a realloc
 * that would copy dead frames. */
int ld_copy_reserve_grow(ld_copy_frozen *f, uint32_t len)
{
    uint32_t need = ld_copy_spill_need(len);
    int grew = f->spill != NULL;

    if (need <= f->spill_cap) /* as ld_copy_reserve checked: never a malloc(0) */
        return LD_COPY_FITS;
    free(f->spill);
    f->spill = malloc(need);
    f->spill_cap = f->spill != NULL ? need : 0;
    if (f->spill == NULL)
        return -ENOMEM;
    return grew ? LD_COPY_GREW : LD_COPY_ALLOC;
}

/* A smaller spill keeps its start, so realloc shrinks it in place; should it refuse,
 * the larger one stays and nothing is given back. */
uint32_t ld_copy_trim(ld_copy_frozen *f, uint32_t len)
{
    uint32_t need = ld_copy_spill_need(len), given;
    void *spill;

    if (need >= f->spill_cap)
        return 0;
    given = f->spill_cap - need;
    if (need == 0) {
        free(f->spill);
        f->spill = NULL;
    } else {
        spill = realloc(f->spill, need);
        if (spill == NULL)
            return 0;
        f->spill = spill;
    }
    f->spill_cap = need;
    return given;
}

/* The deepest frames go to the chunk's room, since a thread that parks again soon
 * parks at about the same depth; only what lies above them spills. Tools are told of
 * the bytes first. */
void ld_copy_freeze_told(ld_slot *chunk, ld_copy_frozen *f, const void *sp,
                         const void *top)
{
    uint32_t len = ld_copy_len(sp, top), spill = ld_copy_spill_need(len);
    const char *lo = (const char *)top - len;

    run_unpoison(lo, len);
    run_addressable(lo, (size_t)((const char *)sp - lo));
    ld_copy_lines(ld_stack_chunk_room(chunk), lo, len - spill);
    if (spill != 0)
        memcpy(f->spill, lo + len - spill, spill);
    f->len = len;
}

void ld_copy_thaw_told(ld_slot *chunk, const ld_copy_frozen *f, void *top)
{
    char *lo = (char *)top - f->len;
    size_t room = f->len < LD_STACK_CHUNK_ROOM ? f->len : LD_STACK_CHUNK_ROOM;

    run_unpoison(lo, f->len);
    run_addressable(lo, f->len);
    ld_copy_lines(lo, ld_stack_chunk_room(chunk), room);
    if (f->len > room)
        memcpy(lo + room, f->spill, f->len - room);
}

void ld_copy_release(ld_copy_frozen *f)
{
    free(f->spill);
    f->spill = NULL;
    f->spill_cap = 0;
    f->len = 0;
}
