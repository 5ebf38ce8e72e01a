/* Internal to the core: the graph context and helpers that ops share. */
#ifndef DG_CORE_INTERNAL_H
#define DG_CORE_INTERNAL_H

#include "difgames/core.h"

#define DG_WT_CACHE 16

/* A transposed copy of a parameter's weight, made once per arena reset. */
typedef struct dg_wt_entry {
    const float *src;        /* the parameter's values (O, I)  */
    int          rows, cols; /* O, I                            */
    float       *wt;         /* (I, O), in the arena            */
} dg_wt_entry;

struct dg_ctx {
    unsigned char *base;     /* arena, 64-byte aligned                     */
    size_t         cap;      /* bytes                                      */
    size_t         used;     /* bump pointer                               */
    size_t         peak;     /* most bytes ever used                       */
    size_t         need;     /* bytes the first failed allocation needed in all (0: none) */
    dg_tensor     *tape;     /* last recorded node (walk via tape_prev)    */
    size_t         tape_len;
    dg_status      status;   /* first error since reset                    */
    uint64_t       flops;    /* floating-point operations since creation    */
    int            nwt;      /* transposed weights cached since the reset   */
    dg_wt_entry    wt[DG_WT_CACHE];
    char           err[256];
};

/* A new result tensor for op with operands src[0..nsrc); records it on the tape
 * when any operand needs a gradient. NULL (and the error) on arena overflow. */
dg_tensor *dg__node(dg_ctx *ctx, dg_op op, int ndim, const int *shape, dg_tensor *a,
                    dg_tensor *b, dg_tensor *c);
/* Gradient buffer of t, allocated zero on first use during backward. */
float *dg__grad(dg_ctx *ctx, dg_tensor *t);
/* C[m, n] += Σ_k A[m·a_rs + k·a_cs] · B[k·ldb + n], m < M, n < N, k < K
 * (gemm.c): the kernel behind linear and matmul, forward and backward. */
void dg__gemm_acc(int M, int N, int K, const float *A, int64_t a_rs, int64_t a_cs,
                  const float *B, int64_t ldb, float *C, int64_t ldc);
/* Backward of one tape node: adds into the gradients of its operands. */
void dg__backward_node(dg_ctx *ctx, dg_tensor *t);

/* The cgroup memory limits (v2 memory.max, v1 memory.limit_in_bytes) less their working sets
 * (use less inactive page cache, memory.stat inactive_file / total_inactive_file), the least over
 * the cgroup that proc_cgroup (a /proc/self/cgroup file) names and each of its parents, under the
 * mounts v2_root and v1_root; -1 if none sets a limit. Missing files are skipped. (dg_mem_limit
 * passes the real ones; tests pass a fake tree.) */
double dg_mem_cgroup_left(const char *proc_cgroup, const char *v2_root, const char *v1_root);

#endif
