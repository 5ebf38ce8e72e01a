/* libFuzzer harness: the safetensors reader and the checkpoint path. Any bytes
 * are parsed as a safetensors file; every tensor it accepts is read, as F32
 * when it is F32, and a policy is loaded from it as `difgames eval` would.
 * Nothing may crash, leak or trip a sanitizer; errors are expected.
 *   ./fuzz_safetensors fuzz/corpus/safetensors -max_total_time=1800 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/difgames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dg_err e = {0};
    dg_st_file *f = dg_st_parse(data, size, "fuzz.safetensors", &e);
    if (!f) return 0;
    double sum = 0.0;
    for (int i = 0; i < dg_st_count(f); i++) {
        const dg_st_tensor *t = dg_st_get(f, i);
        if (t->dtype == DG_DTYPE_F32 && t->numel <= (1u << 20)) {
            float *buf = malloc(t->numel ? t->numel * sizeof(float) : 1);
            if (buf && dg_st_read_f32(f, t->name, t->ndim, t->shape, buf, &e) == DG_OK)
                for (size_t k = 0; k < t->numel; k++) sum += buf[k];
            free(buf);
        }
        if (dg_st_find(f, t->name) != t) abort();  /* every name is found again */
    }
    for (int i = 0; i < dg_st_meta_count(f); i++) (void)dg_st_meta(f, dg_st_meta_key(f, i));
    /* a reach-shaped policy reads its tensors by name and shape, as eval does */
    static const char *const names[] = {"net.0.weight", "net.0.bias", "net.2.weight"};
    static const int64_t shapes[][2] = {{64, 6}, {64, 1}, {64, 64}};
    float w[64 * 64];
    for (int i = 0; i < 3; i++)
        (void)dg_st_read_f32(f, names[i], i == 1 ? 1 : 2, shapes[i], w, &e);
    (void)sum;
    dg_st_free(f);
    return 0;
}
