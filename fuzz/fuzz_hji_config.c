/* libFuzzer harness: the config path of `difgames hji solve`. Any bytes are
 * parsed as YAML and loaded as an HJBI problem (game, grid, target, obstacles,
 * solver options), unused keys are checked, and the config is written back
 * and re-read. Nothing may crash, leak or trip a sanitizer; errors are expected.
 * Grids of more than 2^16 nodes are skipped: their size is the memory
 * estimate's business (refused before allocation), not the parser's, and
 * filling them would only slow the fuzzer down.
 *   ./fuzz_hji_config fuzz/corpus/hji_config -max_total_time=1800 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/difgames.h"
#include "difgames/hji.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse((const char *)data, size, "fuzz.yaml", &e);
    if (!c) return 0;
    int n[DG_HJI_MAX_DIMS], nd = 0;
    double nodes = 1;
    if (dg_cfg_get_int_array(c, "grid.n", n, 0, DG_HJI_MAX_DIMS, &nd, &e) == DG_OK)
        for (int k = 0; k < nd; k++) nodes *= n[k] > 0 ? n[k] : 1;
    if (nodes <= 65536.0) {
        dg_hji_problem *p = dg_hji_problem_load(c, &e);
        if (p) (void)dg_cfg_check_unused(c, &e);
        dg_hji_problem_free(p);
    }
    char *yaml = NULL;
    size_t len = 0;
    if (dg_cfg_to_yaml(c, &yaml, &len, &e) == DG_OK) {
        dg_cfg *c2 = dg_cfg_parse(yaml, len, "roundtrip.yaml", &e);
        if (!c2) abort();  /* what we write must read back */
        dg_cfg_free(c2);
        free(yaml);
    }
    dg_cfg_free(c);
    return 0;
}
