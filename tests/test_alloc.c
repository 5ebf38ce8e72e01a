/* No allocation inside the training loop after the first epoch: the arena is
 * rewound, never freed and refilled. Every malloc of the library is counted
 * (linked with -Wl,--wrap=malloc,...; see tests/CMakeLists.txt). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/check.h"

static long g_allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t k);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t k);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);

void *__wrap_malloc(size_t n) { g_allocs++; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t k) { g_allocs++; return __real_calloc(n, k); }
void *__wrap_realloc(void *p, size_t n) { g_allocs++; return __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { g_allocs++; return __real_aligned_alloc(a, n); }

typedef struct counts {
    long after_epoch[16];
} counts;

static void on_event(const dg_train_event *ev, void *user) {
    if (ev->kind == DG_TRAIN_EV_EPOCH && ev->stats->epoch < 16) ((counts *)user)->after_epoch[ev->stats->epoch] = g_allocs;
}

static void check(const char *label, const char *yaml) {
    dg_err e = {0};
    dg_cfg *cfg;
    dg_train_opts o;
    dg_env *env = check_env(yaml, &cfg, &o);
    dg_trainer *t = dg_trainer_create(env, &o, NULL, NULL, &e);
    assert_non_null(t);
    counts c = {0};
    assert_int_equal(dg_trainer_run(t, on_event, &c, NULL, &e), DG_OK);
    printf("  %-34s allocations after epoch 1: %ld, after epoch %d: %ld\n", label,
           c.after_epoch[1], o.epochs, c.after_epoch[o.epochs]);
    assert_int_equal(c.after_epoch[1], c.after_epoch[o.epochs]);
    dg_trainer_free(t);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

static void test_no_allocation_after_first_epoch(void **state) {
    (void)state;
    check("reach, 1 thread", "game: reach\ntrain: {batch: 16, epochs: 6, threads: 1}\n");
    check("reach, 2 threads", "game: reach\ntrain: {batch: 16, epochs: 6, threads: 2}\n");
    check("reach, checkpointed BPTT", "game: reach\nenv: {horizon: 50}\ntrain: {batch: 8, epochs: 6, checkpoint_every: 7}\n");
    check("chase (metrics)", "game: chase\ntrain: {batch: 8, epochs: 6}\n");
    check("pixel (renderer)", "game: pixel\nenv: {horizon: 10}\ntrain: {batch: 4, epochs: 6}\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_allocation_after_first_epoch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
