/* schema.h: the results file's layout as the jobs declare it, printed as Markdown.
 *
 * `loomdist --schema` prints it; docs/schema.md holds the same text between
 * two markers, and a test keeps them equal, so the documented schema is the written
 * one. The fixed groups (/ranks, /trades) and the attributes that are no option are
 * documented by hand beside it.
 */
#ifndef LD_SCHEMA_H
#define LD_SCHEMA_H

#include <stdio.h>

/* The root attributes that options write, then each job's per-strategy datasets. */
void ld_schema_print(FILE *out);

#endif
