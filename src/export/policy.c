/* A checkpoint's policy as plain C: each player's tanh MLP, its sums in the order the library's
 * kernel (src/core/gemm_f32.c, dg__gemm_bias_act at any batch) adds them and its tanh (dg__tanhf,
 * src/core/internal.h) step for step, so that the code compiled anywhere gives dg_mlp_forward's bits
 * (tests/export_test.sh compares them on 10^6 observations). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/internal.h"
#include "export/internal.h"

#ifndef DG_F64
/* 1 when the tanh divides by its denominator q as the AVX-512 build does: vrcp14 (a 14-bit reciprocal
 * estimate) and one Newton step (internal.h). The exported code then needs vrcp14's exact results:
 * they depend only on the top 16 bits of q's mantissa (the low 7 do not matter, checked below), and
 * each is written as its distance (within +-7) from floor(2^34 / (131073 + 2 i)) - 65536, the
 * reciprocal of the middle of interval i, one hexadecimal digit each. */
#if defined(__AVX512F__)
#define EX_RCP14 1
/* vrcp14 of q (the instruction itself) */
static float rcp14_hw(float q) {
    const __m128 v = _mm_set_ss(q);
    return _mm_cvtss_f32(_mm_rcp14_ss(v, v));
}

/* The 65536 digits of vrcp14's table into out (65536 chars); DG_ERR_ARG when the instruction does
 * not behave as the exported code assumes (its result a function of the top 16 bits of the mantissa,
 * within 7 of the middle's reciprocal). */
static dg_status rcp14_table(char *out, dg_err *e) {
    for (uint32_t i = 0; i < 65536; i++) {
        uint32_t rb[2];
        for (int lo = 0; lo < 2; lo++) {
            const uint32_t b = 0x3f800000u | (i << 7) | (lo ? 127u : 1u);
            float x, r;
            memcpy(&x, &b, sizeof x);
            r = rcp14_hw(x);
            memcpy(&rb[lo], &r, sizeof r);
        }
        const int64_t base = (int64_t)(17179869184ULL / (131073u + 2u * i)) - 65536;
        const int64_t dv = (int64_t)((rb[0] & 0x7fffffu) >> 7) - base;
        if (rb[0] != rb[1] || ((rb[0] >> 23) & 0xffu) != 126u || (rb[0] & 0x7fu) || dv < -8 || dv > 7)
            return dg_err_set(e, DG_ERR_ARG, "export: this CPU's vrcp14 (entry %u) is not the one the exported tanh "
                              "reproduces", (unsigned)i);
        out[i] = "0123456789abcdef"[dv + 8];
    }
    return DG_OK;
}
#else
#define EX_RCP14 0
#endif

/* The tanh and its helpers as C text (internal.h's DG_TANH_PQ, its constants copied: the test's
 * comparison fails if they drift). */
static const char TANH_PQ[] =
    "/* the rational's numerator p and denominator q at x (internal.h's DG_TANH_PQ) */\n"
    "#define TANH_PQ(x, p, q)                                  \\\n"
    "    do {                                                  \\\n"
    "        const float x2 = (x) * (x);                       \\\n"
    "        p = MADDF(x2, -2.76076847742355e-16f, 2.00018790482477e-13f); \\\n"
    "        p = MADDF(p, x2, -8.60467152213735e-11f);         \\\n"
    "        p = MADDF(p, x2, 5.12229709037114e-08f);          \\\n"
    "        p = MADDF(p, x2, 1.48572235717979e-05f);          \\\n"
    "        p = MADDF(p, x2, 6.37261928875436e-04f);          \\\n"
    "        p = MADDF(p, x2, 4.89352455891786e-03f);          \\\n"
    "        p = p * (x);                                      \\\n"
    "        q = MADDF(x2, 1.19825839466702e-06f, 1.18534705686654e-04f); \\\n"
    "        q = MADDF(q, x2, 2.26843463243900e-03f);          \\\n"
    "        q = MADDF(q, x2, 4.89352518554385e-03f);          \\\n"
    "    } while (0)\n\n";

#if EX_RCP14
static const char TANH_RCP14[] =
    "/* vrcp14(q), the AVX-512 reciprocal estimate, for a normal q (0.0048 < q < 0.91 in tanh_) */\n"
    "static float rcp14(float q) {\n"
    "    uint32_t b, r, e, m;\n"
    "    float y;\n"
    "    memcpy(&b, &q, sizeof b);\n"
    "    e = (b >> 23) & 0xffu;\n"
    "    m = b & 0x7fffffu;\n"
    "    if (e < 2 || e > 252) return 1.0f / q; /* not reached from tanh_ */\n"
    "    if (m == 0) {\n"
    "        r = (b & 0x80000000u) | ((254u - e) << 23);\n"
    "    } else {\n"
    "        const uint32_t i = m >> 7;\n"
    "        const char c = RCP[i >> 7][i & 127];\n"
    "        const int dv = (c <= '9' ? c - '0' : c - 'a' + 10) - 8;\n"
    "        const uint32_t v = (uint32_t)((long long)(17179869184ULL / (131073u + 2u * i)) - 65536 + dv);\n"
    "        r = (b & 0x80000000u) | ((253u - e) << 23) | (v << 7);\n"
    "    }\n"
    "    memcpy(&y, &r, sizeof y);\n"
    "    return y;\n"
    "}\n\n"
    "/* tanh(x): x clamped to +-LIM (a NaN stays), the rational p / q as p (1/q), 1/q from vrcp14 and one\n"
    " * Newton step (the library's AVX-512 tanh) */\n"
    "static float tanh_(float x) {\n"
    "    const float c = x != x ? x : x < -LIM ? -LIM : x > LIM ? LIM : x;\n"
    "    float p, q, r;\n"
    "    TANH_PQ(c, p, q);\n"
    "    r = rcp14(q);\n"
    "    return p * fmaf(r, fmaf(-q, r, 1.0f), r);\n"
    "}\n\n";
#else

static const char TANH_DIV[] =
    "/* tanh(x): x itself where |x| < 0.0004, +-1 where |x| > LIM, else the rational p / q (the library's\n"
    " * portable tanh) */\n"
    "static float tanh_(float x) {\n"
    "    float p, q;\n"
    "    TANH_PQ(x, p, q);\n"
    "    return fabsf(x) < 0.0004f ? x : fabsf(x) > LIM ? copysignf(1.0f, x) : p / q;\n"
    "}\n\n";
#endif

/* One layer: the sums of the library's kernel, by column. Before fused_to: from the bias, one
 * multiply-add a k in order (its 8 x 32 blocks and 16-wide vectors: fused where the build fuses);
 * from fused_to to dot_from: the same order, a product then an add (block_4xn's scalar columns,
 * which the compiler leaves unfused: found by the bitwise test, tests/export_test.sh); from dot_from
 * (the narrow rest, fewer than 16 columns, of an input of 16 or more): narrow_dot's dot products, 16
 * lanes over k by chunks of 512, their sum as hsum's tree, the k left over, onto the bias. Then the
 * tanh. */
static const char LAYER[] =
    "/* out = tanh(W h + b): W (O, I) row-major; the library's order of sums (see the opening) */\n"
    "static void layer(const float *W, const float *b, int I, int O, int fused_to, int dot_from, const float *h,\n"
    "                  float *out) {\n"
    "    int n, k, k0, l;\n"
    "    for (n = 0; n < O; n++) {\n"
    "        const float *w = W + (long)n * I;\n"
    "        float acc = b[n];\n"
    "        if (n < fused_to) {\n"
    "            for (k = 0; k < I; k++) acc = MADDF(h[k], w[k], acc);\n"
    "        } else if (n < dot_from) {\n"
    "            for (k = 0; k < I; k++) acc = acc + h[k] * w[k];\n"
    "        } else {\n"
    "            for (k0 = 0; k0 < I; k0 += 512) {\n"
    "                const int kc = I - k0 < 512 ? I - k0 : 512, kv = kc & ~15;\n"
    "                float lane[16], hh[8], q[4], sum;\n"
    "                for (l = 0; l < 16; l++) lane[l] = 0;\n"
    "                for (k = 0; k < kv; k += 16)\n"
    "                    for (l = 0; l < 16; l++) lane[l] = MADDF(h[k0 + k + l], w[k0 + k + l], lane[l]);\n"
    "                for (l = 0; l < 8; l++) hh[l] = lane[l] + lane[l + 8];\n"
    "                for (l = 0; l < 4; l++) q[l] = hh[l] + hh[l + 4];\n"
    "                sum = (q[0] + q[2]) + (q[1] + q[3]);\n"
    "                for (k = kv; k < kc; k++) sum = MADDF(h[k0 + k], w[k0 + k], sum);\n"
    "                acc = acc + sum;\n"
    "            }\n"
    "        }\n"
    "        out[n] = tanh_(acc);\n"
    "    }\n"
    "}\n\n";

/* Player i's parameters of p as W<i>_<l>, B<i>_<l>; its forward as prefix_policy<suffix>. */
static void write_player(FILE *fp, const dg_mlp *m, const dg_params *p, int i, const char *prefix, const char *suffix) {
    int width = 0;
    for (int l = 0; l <= m->nlayers; l++) width = m->sizes[l] > width ? m->sizes[l] : width;
    for (int l = 0; l < m->nlayers; l++) {
        const dg_param_info *w = &p->info[m->w[l]], *b = &p->info[m->b[l]];
        fprintf(fp, "static const float W%d_%d[%lld] = { /* %s (%d, %d) */\n", i, l, (long long)w->n, w->name,
                m->sizes[l + 1], m->sizes[l]);
        dg__ex_floats(fp, p->data + w->offset, w->n);
        fprintf(fp, "};\nstatic const float B%d_%d[%lld] = { /* %s */\n", i, l, (long long)b->n, b->name);
        dg__ex_floats(fp, p->data + b->offset, b->n);
        fprintf(fp, "};\n");
    }
    fprintf(fp, "\nvoid %s_policy%s(const float *obs, float *act) {\n    float h[2][%d];\n", prefix, suffix, width);
    for (int l = 0; l < m->nlayers; l++) {
        /* the kernel's paths (dg__gemm_bias_act): 8 x 32 blocks up to Nw, then the narrow rest: dot
           products (fewer than 16 columns, I >= 16), or block_4xn: a 16-wide vector (16 columns or more
           left), then scalar columns. One input (I 1) with fewer than 16 columns left takes
           narrow_over_m at a batch of 16 or more: this is the single observation's path. */
        const int O = m->sizes[l + 1], I = m->sizes[l], Nw = O & ~31, Nr = O - Nw;
        const int dot_from = (Nr < 16 && I >= 16) ? Nw : O;
        const int fused_to = dot_from == Nw ? Nw : Nr >= 16 ? Nw + 16 : Nw;
        fprintf(fp, "    layer(W%d_%d, B%d_%d, %d, %d, %d, %d, %s, %s);\n", i, l, i, l, I, O, fused_to, dot_from,
                l == 0 ? "obs" : (l % 2 ? "h[0]" : "h[1]"), l == m->nlayers - 1 ? "act" : (l % 2 ? "h[1]" : "h[0]"));
    }
    fprintf(fp, "}\n\n");
}
#endif

dg_status dg_export_policy(const dg_policy *pol, const dg_params *p, const char *label, const char *dir,
                           const char *prefix, dg_export_files *out, dg_err *e) {
#ifdef DG_F64
    (void)pol, (void)p, (void)label, (void)dir, (void)prefix, (void)out;
    return dg_err_set(e, DG_ERR_ARG, "export: a policy of the double tape (train.precision: f64) is not exported: "
                      "float32 policies only");
#else
    if (!pol || !p || pol->n < 1 || pol->n > DG_MAX_PLAYERS) return dg_err_set(e, DG_ERR_ARG, "export: no policy");
    if (pol->plan_steps)
        return dg_err_set(e, DG_ERR_ARG, "export: an open-loop plan (train.mode: open_loop) has no network to export");
    for (int i = 0; i < pol->n; i++) {
        const dg_mlp *m = &pol->mlp[i];
        if (pol->fn[i]) return dg_err_set(e, DG_ERR_ARG, "export: player %d is a C function, not a network", i);
        if (m->act != DG_MLP_TANH || m->linear_out)
            return dg_err_set(e, DG_ERR_ARG, "export: player %d's network is not a tanh policy", i);
    }
    static char table[65536];
#if EX_RCP14
    dg_status s = rcp14_table(table, e);
    if (s != DG_OK) return s;
#else
    dg_status s = DG_OK;
    (void)table;
#endif
    ex_out o;
    if ((s = dg__ex_open(&o, dir, prefix, e)) != DG_OK) return s;
    FILE *h = o.h.fp, *c = o.c.fp;
    dg__ex_header_open(h, prefix, "a trained policy's forward pass");
    char sfx[DG_MAX_PLAYERS][12], who[DG_MAX_PLAYERS][48];  /* player i's names: P_policy, P_policy2, P_policy3 ... */
    for (int i = 0; i < pol->n; i++) {
        snprintf(sfx[i], sizeof sfx[i], i ? "%d" : "", i + 1);
        if (i == 0) snprintf(who[i], sizeof who[i], "the player (the agent, or the pursuer)");
        else if (i == 1 && pol->n == 2) snprintf(who[i], sizeof who[i], "the second player (the evader)");
        else snprintf(who[i], sizeof who[i], "player %d", i + 1);
    }
    for (int i = 0; i < pol->n; i++) {
        const dg_mlp *m = &pol->mlp[i];
        fprintf(h,
                "#define %s_OBS%s %d\n#define %s_ACT%s %d\n"
                "/* %s's action act (%s_ACT%s, in [-1, 1]) for its observation obs (%s_OBS%s) */\n"
                "void %s_policy%s(const float *obs, float *act);\n",
                prefix, sfx[i], m->sizes[0], prefix, sfx[i], m->sizes[m->nlayers], who[i], prefix, sfx[i], prefix,
                sfx[i], prefix, sfx[i]);
    }
    dg__ex_header_close(h, prefix);
    fprintf(c,
            "/* %s.c: the policy of %s (%d player%s), written by `difgames export` (docs/export.md): the\n"
            " * library's dg_mlp_forward bit for bit. C99 and libm only; compile without contracting a * b + c\n"
            " * (-ffp-contract=off; GCC's default under -std=c99). */\n"
            "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"%s.h\"\n\n",
            prefix, label ? label : "a checkpoint", pol->n, pol->n > 1 ? "s" : "", prefix);
    fprintf(c,
            "/* 1: the library that wrote this fused a * b + c into one rounding (FMA), as fmaf() does */\n"
            "#define FUSED %d\n#if FUSED\n#define MADDF(a, b, c) fmaf(a, b, c)\n#else\n"
            "#define MADDF(a, b, c) ((a) * (b) + (c))\n#endif\n#define LIM %af /* |x| beyond which tanh is +-1 */\n\n",
            dg__ex_fused(), (double)DG_TANH_LIM);
    fputs(TANH_PQ, c);
#if EX_RCP14
    fprintf(c, "/* vrcp14's table (see rcp14) */\nstatic const char RCP[512][129] = {\n");
    for (int r = 0; r < 512; r++) fprintf(c, "\"%.128s\",\n", table + 128 * r);
    fprintf(c, "};\n\n");
    fputs(TANH_RCP14, c);
#else
    fputs(TANH_DIV, c);
#endif
    fputs(LAYER, c);
    for (int i = 0; i < pol->n; i++) write_player(c, &pol->mlp[i], p, i, prefix, sfx[i]);
    return dg__ex_commit(&o, out, e);
#endif
}
