/* loop_b.c: the other half of the loop in loop_a.c. */
int ld_loop_a(int n);
int ld_loop_b(int n);

int ld_loop_b(int n)
{
    return n > 0 ? ld_loop_a(n - 1) : 1;
}
