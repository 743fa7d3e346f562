/* loop_a.c: half of a loop for test_layers.sh to find: a calls b, b calls a. */
int ld_loop_b(int n);
int ld_loop_a(int n);

int ld_loop_a(int n)
{
    return n > 0 ? ld_loop_b(n - 1) : 0;
}
