/* gcc warnings for the `generic` format (path:line:col: message). */
#include <stdio.h>

static int total(const int *xs, int n) {
    int sum;
    for (unsigned i = 0; i < n; i++)
        sum += xs[i];
    return sum;
}

int main(void) {
    int xs[3] = {1, 2, 3};
    printf("%s\n", total(xs, 3));
    return 0;
}
