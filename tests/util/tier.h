/* The test tiers (tests/README.md) inside one C test file: its quick cases are the unit tier, its
 * long anchors (a training to a target, a fine grid) a second group, the slow tier. CMake registers
 * a file that calls dg_test_run_tiers twice: <name> with DG_TEST_TIER=unit runs the quick group
 * alone, <name>_slow with DG_TEST_TIER=slow the long one alone; run by hand (the variable unset)
 * the program runs both. Include after <cmocka.h>. */
#ifndef DG_TESTS_UTIL_TIER_H
#define DG_TESTS_UTIL_TIER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the group of tier ("unit" or "slow") runs: DG_TEST_TIER unset or empty runs both, else
 * the one it names. Any other value exits with status 2 (a misspelt tier must not pass by running
 * nothing). */
static inline int dg_test_tier_runs(const char *tier) {
    const char *want = getenv("DG_TEST_TIER");
    if (!want || !*want) return 1;
    if (strcmp(want, "unit") != 0 && strcmp(want, "slow") != 0) {
        fprintf(stderr, "DG_TEST_TIER=%s: want unit or slow (or unset: both)\n", want);
        exit(2);
    }
    return strcmp(want, tier) == 0;
}

/* Runs the cmocka arrays unit and slow (each a group named after its tier, with the same group
 * setup and teardown) as DG_TEST_TIER says: the number of failed cases, main's exit status. */
#define dg_test_run_tiers(unit, slow, setup, teardown)                                       \
    ((dg_test_tier_runs("unit") ? cmocka_run_group_tests_name("unit", unit, setup, teardown) : 0) + \
     (dg_test_tier_runs("slow") ? cmocka_run_group_tests_name("slow", slow, setup, teardown) : 0))

#endif
