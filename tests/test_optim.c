/* Adam, SGD and gradient clipping against values computed by hand (in double,
 * from PyTorch's documented update rules). Run with --dump to print the
 * trajectories; tests/ref_optim.py compares those with torch.optim. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/core.h"

#define STEPS 5

/* Two parameters of shapes (2,3) and (4): w_i = sin(0.7 i + 0.3). */
static dg_params *make_params(void) {
    dg_params *p = dg_params_create();
    dg_params_add(p, "a", 2, (int[]){2, 3}, NULL);
    dg_params_add(p, "b", 1, (int[]){4}, NULL);
    for (size_t i = 0; i < p->total; i++) p->data[i] = sinf(0.7f * (float)i + 0.3f);
    return p;
}

/* the gradient fed at step s (0-based) */
static float grad_at(size_t i, int s) { return cosf(1.3f * (float)i + 0.5f * (float)s) * (float)(1 + i % 3); }

static void set_grads(dg_params *p, int s) {
    for (size_t i = 0; i < p->total; i++) p->grad[i] = grad_at(i, s);
}

typedef struct adam_cfg { double lr, b1, b2, eps, wd; } adam_cfg;
typedef struct sgd_cfg { double lr, mu, damp, wd; int nesterov; } sgd_cfg;

static const adam_cfg ADAM[] = {{1e-2, 0.9, 0.999, 1e-8, 0.0}, {3e-2, 0.8, 0.99, 1e-3, 0.1}};
static const sgd_cfg SGD[] = {{0.1, 0.0, 0.0, 0.0, 0}, {0.1, 0.9, 0.1, 0.01, 0}, {0.05, 0.9, 0.0, 0.0, 1}};

static void run_adam(const adam_cfg *c, dg_params *p) {
    dg_adam opt;
    assert_int_equal(dg_adam_init(&opt, p, c->lr, c->b1, c->b2, c->eps, c->wd), DG_OK);
    for (int s = 0; s < STEPS; s++) {
        set_grads(p, s);
        dg_adam_step(&opt, p);
    }
    assert_int_equal(opt.step, STEPS);
    dg_adam_free(&opt);
}

static void run_sgd(const sgd_cfg *c, dg_params *p) {
    dg_sgd opt;
    assert_int_equal(dg_sgd_init(&opt, p, c->lr, c->mu, c->damp, c->wd, c->nesterov), DG_OK);
    for (int s = 0; s < STEPS; s++) {
        set_grads(p, s);
        dg_sgd_step(&opt, p);
    }
    dg_sgd_free(&opt);
}

static void test_adam_by_hand(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof ADAM / sizeof ADAM[0]; k++) {
        const adam_cfg *c = &ADAM[k];
        dg_params *p = make_params();
        run_adam(c, p);
        for (size_t i = 0; i < p->total; i++) {
            double w = sin(0.7 * (double)i + 0.3), m = 0, v = 0;
            w = (float)w;
            for (int s = 0; s < STEPS; s++) {
                double g = grad_at(i, s) + c->wd * w;
                m = c->b1 * m + (1 - c->b1) * g;
                v = c->b2 * v + (1 - c->b2) * g * g;
                double mhat = m / (1 - pow(c->b1, s + 1)), vhat = v / (1 - pow(c->b2, s + 1));
                w -= c->lr * mhat / (sqrt(vhat) + c->eps);
            }
            assert_float_equal(p->data[i], w, 2e-6 * fmax(1, fabs(w)));
        }
        dg_params_free(p);
    }
}

static void test_sgd_by_hand(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof SGD / sizeof SGD[0]; k++) {
        const sgd_cfg *c = &SGD[k];
        dg_params *p = make_params();
        run_sgd(c, p);
        for (size_t i = 0; i < p->total; i++) {
            double w = (float)sin(0.7 * (double)i + 0.3), buf = 0;
            for (int s = 0; s < STEPS; s++) {
                double d = grad_at(i, s) + c->wd * w;
                if (c->mu != 0) {
                    buf = s == 0 ? d : c->mu * buf + (1 - c->damp) * d;
                    d = c->nesterov ? d + c->mu * buf : buf;
                }
                w -= c->lr * d;
            }
            assert_float_equal(p->data[i], w, 2e-6 * fmax(1, fabs(w)));
        }
        dg_params_free(p);
    }
}

static void test_clip_by_hand(void **state) {
    (void)state;
    dg_params *p = make_params();
    set_grads(p, 0);
    double sq = 0;
    for (size_t i = 0; i < p->total; i++) sq += (double)p->grad[i] * p->grad[i];
    const double norm = sqrt(sq);
    float before[16];
    memcpy(before, p->grad, p->total * sizeof(float));
    /* above the norm: unchanged, returns the norm */
    float got = dg_clip_grad_norm(p, (float)norm * 2);
    assert_float_equal(got, norm, 1e-5 * norm);
    assert_memory_equal(before, p->grad, p->total * sizeof(float));
    /* below: scaled by max_norm / (norm + 1e-6) */
    got = dg_clip_grad_norm(p, 1.0f);
    assert_float_equal(got, norm, 1e-5 * norm);
    for (size_t i = 0; i < p->total; i++)
        assert_float_equal(p->grad[i], before[i] / (norm + 1e-6), 1e-6);
    assert_float_equal(dg_grad_norm(p), 1.0, 1e-5);
    dg_params_free(p);
}

static void test_rejects_bad_hyperparameters(void **state) {
    (void)state;
    dg_params *p = make_params();
    dg_adam a;
    dg_sgd s;
    assert_int_equal(dg_adam_init(&a, p, 1e-3f, 1.0f, 0.999f, 1e-8f, 0), DG_ERR_ARG);
    assert_int_equal(dg_adam_init(&a, p, NAN, 0.9f, 0.999f, 1e-8f, 0), DG_ERR_ARG);
    assert_int_equal(dg_sgd_init(&s, p, 0.1f, 0.0f, 0.0f, 0.0f, 1), DG_ERR_ARG);
    dg_params_free(p);
}

static void dump(void) {
    for (size_t k = 0; k < sizeof ADAM / sizeof ADAM[0]; k++) {
        dg_params *p = make_params();
        run_adam(&ADAM[k], p);
        printf("adam%zu", k);
        for (size_t i = 0; i < p->total; i++) printf(" %.9g", p->data[i]);
        printf("\n");
        dg_params_free(p);
    }
    for (size_t k = 0; k < sizeof SGD / sizeof SGD[0]; k++) {
        dg_params *p = make_params();
        run_sgd(&SGD[k], p);
        printf("sgd%zu", k);
        for (size_t i = 0; i < p->total; i++) printf(" %.9g", p->data[i]);
        printf("\n");
        dg_params_free(p);
    }
    const float max_norms[2] = {1.0f, 100.0f};
    for (int k = 0; k < 2; k++) {
        dg_params *p = make_params();
        set_grads(p, 0);
        float norm = dg_clip_grad_norm(p, max_norms[k]);
        printf("clip%d %.9g", k, norm);
        for (size_t i = 0; i < p->total; i++) printf(" %.9g", p->grad[i]);
        printf("\n");
        dg_params_free(p);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--dump") == 0) {
        dump();
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adam_by_hand),
        cmocka_unit_test(test_sgd_by_hand),
        cmocka_unit_test(test_clip_by_hand),
        cmocka_unit_test(test_rejects_bad_hyperparameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
