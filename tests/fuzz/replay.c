/* replay.c: the fuzz harness as a plain test. Every file in the folders named on the
 * command line goes through LLVMFuzzerTestOneInput once; a broken property aborts.
 * This is how builds without libFuzzer (gcc, the sanitizer passes) keep the corpus
 * passing. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feed one file to the harness; -1 if it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return -1;
    LLVMFuzzerTestOneInput(buf, n);
    return 0;
}

/* Every regular entry of one folder, skipping the dot files. */
static int replay_folder(const char *dir, unsigned *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return -1;
    }
    int rc = 0;
    for (const struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (replay_file(path) != 0) {
            fprintf(stderr, "replay: cannot read %s\n", path);
            rc = -1;
            continue;
        }
        (*count)++;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= replay_folder(argv[i], &count);
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    printf("replay: %u inputs, every property held\n", count);
    return rc ? 1 : 0;
}
