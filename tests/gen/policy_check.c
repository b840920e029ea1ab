/* policy_check [FILE]: a program linked to libcallguard (and the toy
 * layer), for the policy reader's tests. libcallguard reads CALLGUARD_POLICY
 * before main (a bad file: one line on stderr, exit 2); FILE is then loaded
 * with cg_policy_load (a bad file: its error on stderr, exit 2). Prints
 * "loaded" when every file was accepted, CG_PENDING included (a file for a
 * layer not loaded here: kept, and named on stderr at exit). */
#include <callguard/callguard.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    int rc = argc > 1 ? cg_policy_load(argv[1]) : CG_OK;
    if (rc != CG_OK && rc != CG_PENDING) {
        fprintf(stderr, "%s\n", cg_last_error());
        return 2;
    }
    puts("loaded");
    return 0;
}
