/* libFuzzer harness: the HJI inputs of `difgames hji`. Bytes that look like
 * safetensors (an 8-byte header length, then '{') are read as a value file:
 * parsed, checked, every stored time read and held against a pursuit2d
 * problem; any other bytes are an HJI config: parsed, its problem built
 * (grids of at most a million nodes: a larger one is real work, not a bug),
 * unused keys checked, its solve's memory estimated. Nothing may crash, leak
 * or trip a sanitizer; errors are expected.
 *
 * Build and run: fuzz/run.sh hji. Seeds: the configs in configs/hji and small value
 * files from `difgames hji solve`. The test suite replays fuzz/corpus/hji. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/difgames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A pursuit2d problem on the seeds' grid, made once: what value files are checked against. */
static dg_hji_problem *reference(void) {
    static dg_hji_problem *p;
    if (!p) {
        static const char Y[] = "game: pursuit2d\nt_end: 0.2\ngrid: {n: [11, 11]}\n";
        dg_err e = {0};
        dg_cfg *c = dg_cfg_parse(Y, sizeof Y - 1, "ref.yaml", &e);
        p = c ? dg_hji_problem_load(c, &e) : NULL;
        dg_cfg_free(c);
        if (!p) abort();
    }
    return p;
}

static void value_file(const uint8_t *data, size_t size) {
    dg_err e = {0};
    dg_hji_value v;
    if (dg_hji_value_parse(data, size, "fuzz.safetensors", &v, &e) != DG_OK) return;
    double *out = malloc((size_t)v.grid.nodes * sizeof *out);
    for (int i = 0; out && i < v.nt; i++) (void)dg_hji_value_read(&v, i, out, &e);
    free(out);
    (void)dg_hji_value_check(&v, reference(), "ref.yaml", &e);
    dg_hji_value_close(&v);
}

static void config(const uint8_t *data, size_t size) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse((const char *)data, size, "fuzz.yaml", &e);
    if (!c) return;
    int n[DG_HJI_MAX_DIMS], cnt = 0;
    double nodes = 1;
    if (dg_cfg_has(c, "grid.n") &&
        dg_cfg_get_list(c, "grid.n", DG_CFG_INT, 0, n, 1, DG_HJI_MAX_DIMS, &cnt, &e) == DG_OK)
        for (int k = 0; k < cnt; k++) nodes *= n[k] > 0 ? n[k] : 1;
    if (nodes <= 1e6) {
        dg_hji_problem *p = dg_hji_problem_load(c, &e);
        if (p && dg_cfg_check_unused(c, &e) == DG_OK) {
            if (!(dg_hji_solve_memory(&p->grid, &p->game, &p->opts, 3) > 0)) abort();
        }
        dg_hji_problem_free(p);
    }
    dg_cfg_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t hl = 0;
    for (int i = 0; i < 8 && (size_t)i < size; i++) hl |= (uint64_t)data[i] << (8 * i);
    if (size > 9 && hl < size && data[8] == '{') value_file(data, size);
    else config(data, size);
    return 0;
}
