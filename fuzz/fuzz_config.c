/* libFuzzer harness: the whole config path of `difgames train`. Any bytes
 * are parsed as YAML, a game is made from them, the training options are
 * read, unused keys are checked and the config is written back and re-read.
 * Nothing may crash, leak or trip a sanitizer; errors are expected.
 *
 * Build and run (fuzz/run.sh does this):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc fuzz/fuzz_config.c
 *       (every library source) -lyaml -lcjson -lpng -lgif -lm -fopenmp
 *   ./fuzz_config fuzz/corpus/config -max_total_time=1800
 * The test suite replays fuzz/corpus/config under ASan+UBSan (fuzz/replay.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/difgames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse((const char *)data, size, "fuzz.yaml", &e);
    if (!c) return 0;
    dg_env *env = dg_env_create(c, &e);
    if (env) {
        dg_train_opts o;
        if (dg_train_opts_read(c, &o, &e) == DG_OK) (void)dg_cfg_check_unused(c, &e);
        dg_env_free(env);
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
