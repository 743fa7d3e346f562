/* test_pg_mask.c: what messages and the results file show of a connection's secrets
 * (pg.h): a URL's user information and each password= of its query are masked,
 * however the word was given; a word with neither "://" nor "password=" is shown as
 * typed; and a mask cut to a small buffer stays a terminated string. */
#include <string.h>

#include "check.h"
#include "pg.h"

/* word, masked, must read want. */
static void check_masked(const char *word, const char *want)
{
    char got[256];
    ld_pg_word_mask(word, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "'%s' showed as '%s', not '%s'", word, got, want);
}

int main(void)
{
    check_masked("postgresql://u:sekrit@h:5432/db", "postgresql://***@h:5432/db");
    check_masked("postgresql://h/db?sslmode=off&password=sekrit&x=1",
                 "postgresql://h/db?sslmode=off&password=***&x=1");
    check_masked("--db-url=postgresql://u:s@h/db?password=s",
                 "--db-url=postgresql://***@h/db?password=***");
    check_masked("--db-url=password=sekrit", "--db-url=password=***");
    check_masked("host=h password=sekrit user=u", "host=h password=*** user=u");
    /* Neither a URL nor a password: as typed, an '@' included. */
    check_masked("--output=runs/a@b.h5", "--output=runs/a@b.h5");
    check_masked("rank0", "rank0");
    /* A key that only ends in password= is not one. */
    check_masked("postgresql://h/db?oldpassword=x", "postgresql://h/db?oldpassword=x");

    char small[12];
    ld_pg_word_mask("postgresql://u:sekrit@h/db", small, sizeof small);
    CHECK(strlen(small) == sizeof small - 1 && strstr(small, "sekrit") == NULL,
          "cut to %zu bytes: '%s'", sizeof small, small);
    return failures != 0;
}
