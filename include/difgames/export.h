/* difgames export: a solved value and a trained policy written as plain C (C99 and libm only), to run
 * on a robot or in another program without this library (`difgames export`, docs/export.md).
 *
 * dg_export_value writes DIR/P.h and DIR/P.c for a grid value (a value file of `difgames hji solve`):
 *     double P_value(const double *x);                        V(x)
 *     double P_grad(const double *x, double *g);              V(x), and its gradient into g (P_NX)
 *     double P_control(const double *x, double *u, double *d); V(x), both players' feedback into u (P_NU)
 *                                                               and d (P_ND), bang-bang from the gradient
 *     double P_filter(const double *x, const double *u_nominal, double *u_safe);
 *                                                              the least-restrictive (switch) filter,
 *                                                              or the qp (HJ control-barrier) filter
 * the table of V (float64 or float32, as solved) a static array. They are the library's own
 * dg_hji_interp, dg_hji_feedback (layer 0, or the boundary layer asked) at the value file's last
 * time and the qp filter's dg_hji_filter_row, bit for bit.
 * dg_export_policy writes P_policy(const float *obs, float *act): a checkpoint's policy network,
 * dg_mlp_forward's bits at one thread.
 *
 * The exported code allocates nothing, holds no state (thread-safe), and never reads past its
 * tables: out of the grid a plain axis is clamped to its edge and V extrapolated linearly with the
 * edge's gradient, a periodic axis wraps, a NaN coordinate reads as the axis's low edge (the
 * library's answer). It reproduces the arithmetic of the library build that wrote it (its fused
 * multiply-adds as fma() calls where that build fuses them), so it must be compiled without
 * contraction of a * b + c (GCC's default under -std=c99; -ffp-contract=off elsewhere) and without
 * -ffast-math. */
#ifndef DIFGAMES_EXPORT_H
#define DIFGAMES_EXPORT_H

#include "difgames/api.h"
#include "difgames/fileio.h"
#include "difgames/hji_problem.h"
#include "difgames/policy.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_EXPORT_PREFIX_MAX 32  /* longest prefix P (a C identifier) */

/* What an export wrote: the two files' paths and sizes. */
typedef struct dg_export_files {
    char      h[DG_PATH_MAX], c[DG_PATH_MAX];   /* DIR/P.h, DIR/P.c                              */
    long long h_bytes, c_bytes;                 /* their sizes                                   */
} dg_export_files;

/* 1 when prefix can name the exported functions: a C identifier ([A-Za-z_][A-Za-z0-9_]*) of 1 to
 * DG_EXPORT_PREFIX_MAX characters; 0 otherwise. */
DG_API int dg_export_prefix_ok(const char *prefix);

/* NULL when dg_export_value can export problem p's feedback; else the one reason it cannot (a game
 * whose dynamics the exporter cannot write as C: a model file, collision9d; an input that is not a
 * box or a ball; a generic Hamiltonian). */
DG_API const char *dg_export_value_refusal(const dg_hji_problem *p);

/* What dg_export_value writes beside the value: P_filter's kind, the switch filter (mode
 * DG_SAFETY_SWITCH: the value's control where V(x) <= margin, else the nominal control, both in u's
 * units) or the qp filter (DG_SAFETY_QP: dg_hji_filter_row with gamma, the nominal and the safe action
 * in u's box's [-1, 1] coordinates, as the library's filter takes a policy's action); and P_control's
 * boundary layer (dg_hji_feedback's layer; 0: bang-bang). The filters use the bang-bang feedback. */
typedef struct dg_export_value_opts {
    int    mode;                                /* dg_safety_mode (safety.h)                     */
    double margin;                              /* switch: finite                                */
    double gamma;                               /* qp: finite, >= 0                              */
    double layer;                               /* P_control: in [0, 1]                          */
} dg_export_value_opts;

/* NULL when problem p's P_filter can be exported in mode (a dg_safety_mode); else the one reason it
 * cannot (qp: the library's closed form is for a box control, so a ball or no control is refused). */
DG_API const char *dg_export_filter_refusal(const dg_hji_problem *p, int mode);

/* Writes dir/prefix.h and dir/prefix.c (atomically; dir made if missing) for the value file
 * value_path solved for p (dg_hji_value_load checks that it was; config names p's file in
 * messages): V at the file's last time. The table keeps the file's precision. P_filter and
 * P_control as filter says (NULL: the switch filter at margin 0, bang-bang). out (may be NULL) gets the paths and sizes. DG_OK;
 * DG_ERR_ARG for a bad prefix, a problem it cannot export (dg_export_value_refusal), a filter it
 * cannot (dg_export_filter_refusal) or a margin, gamma or layer out of bounds; the value file's errors;
 * DG_ERR_IO writing. */
DG_API dg_status dg_export_value(const dg_hji_problem *p, const char *config, const char *value_path, const char *dir,
                                 const char *prefix, const dg_export_value_opts *filter, dg_export_files *out, dg_err *e);

/* Writes dir/prefix.h and dir/prefix.c for the policy pol with parameters p (dg_run_policy_load):
 * prefix_policy (player 0: the agent or the pursuer) and, with two players, prefix_policy2 (the
 * evader), each a tanh MLP's forward. label names the checkpoint in the files' opening comment.
 * DG_OK; DG_ERR_ARG for a bad prefix, an open-loop plan or a player that is a C function, or the
 * double tape (train.precision: f64 is not exported); DG_ERR_IO writing. */
DG_API dg_status dg_export_policy(const dg_policy *pol, const dg_params *p, const char *label, const char *dir,
                                  const char *prefix, dg_export_files *out, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
