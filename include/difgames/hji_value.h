/* difgames hji value file: what `difgames hji solve` writes (safetensors with the grid, the game's
 * constants and fingerprint, the times), read, checked against a problem and written, and the
 * memory and disk a solve and its file need. Part of difgames/hji.h. */
#ifndef DIFGAMES_HJI_VALUE_H
#define DIFGAMES_HJI_VALUE_H

#include "difgames/api.h"
#include "difgames/hji_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_HJI_MAX_TIMES 64  /* most output times of a solve (--times) kept in a value file */

struct dg_st_file;  /* difgames/safetensors.h */

/* A game's fingerprint, what two solves of the same game share whatever the config's spelling:
 * the payoff type and discount, then at DG_HJI_PRINT_NODES nodes spread over p's grid the
 * Hamiltonian at a fixed gradient (dynamics, input sets and roles, running costs), the value the
 * solve starts from (target or terminal cost) and the obstacle (or held nodes). Into out
 * (DG_HJI_PRINT_MAX); returns the count. A value file stores it (metadata 'game_print') and
 * dg_hji_value_check compares it, so a file solved for another game of the same name (game:
 * linear or model with other terms, other costs or obstacles) is refused. */
DG_API int dg_hji_game_print(const dg_hji_problem *p, double *out);
/* A value file of `difgames hji solve`: safetensors with 'value' (the grid's shape) at t_end,
 * 'value_1' .. at earlier times, and metadata format, game, param (its constants' values in the
 * game's order, zeros up to 16), lo, hi, n,
 * periodic, times, config. */
typedef struct dg_hji_value {
    struct dg_st_file *f;                 /* the loaded file                                   */
    char        path[512];                /* for messages                                      */
    dg_hji_grid grid;                     /* rebuilt from the metadata                         */
    char        game[32];                 /* "" if the file does not say                       */
    char        source[16];               /* "model" or "builtin" (dg_hji_problem_source); files
                                             before it: "model" for game "model", else "builtin" */
    double      param[16];                /* the game's constants (nparam of them; -1: absent) */
    int         nparam;
    int         nt;                       /* stored times                                      */
    double      times[DG_HJI_MAX_TIMES];
    unsigned char sampled[DG_HJI_MAX_TIMES]; /* 1: a time-slice sample for the strategies (solve's
                                           * --slices), not a time asked for; plots leave it out */
    int         nprint;                   /* the game's fingerprint (dg_hji_game_print); 0: absent */
    double      print[DG_HJI_PRINT_MAX];
    int         payoff;                   /* what the value is (dg_hji_payoff_type), from the
                                             fingerprint's first number: KIND when it is absent */
    double      discount;                 /* a game of degree's discount (the fingerprint's second) */
} dg_hji_value;

/* Loads path and checks its metadata and tensors (DG_ERR_FORMAT naming the file and what is wrong).
 * dg_hji_value_parse does the same from memory (label names it). Close with dg_hji_value_close. */
DG_API dg_status dg_hji_value_open(const char *path, dg_hji_value *v, dg_err *e);
DG_API dg_status dg_hji_value_parse(const void *buf, size_t len, const char *label, dg_hji_value *v, dg_err *e);
DG_API void      dg_hji_value_close(dg_hji_value *v);                            /* NULL and twice are harmless */
/* Time index i (0 .. nt-1, the last is t_end) into out (grid.nodes doubles); DG_ERR_NONFINITE when a
 * value is NaN or infinite. */
DG_API dg_status dg_hji_value_read(const dg_hji_value *v, int i, double *out, dg_err *e);
/* Every stored time into out (nt * grid.nodes doubles, time index 0 first), as dg_hji_value_read;
 * with v->times, the slices strategies read (dg_hji_slices). */
DG_API dg_status dg_hji_value_read_all(const dg_hji_value *v, double *out, dg_err *e);
/* DG_OK when v was solved for p (config names p's file in messages): the same game and constants,
 * the same grid axis by axis (nodes, bounds, periodic); else DG_ERR_ARG saying what differs
 * (another game, another grid, transposed axes). */
DG_API dg_status dg_hji_value_check(const dg_hji_value *v, const dg_hji_problem *p, const char *config, dg_err *e);
/* Writes nt values (nt, nodes) at times[] of problem p into path (atomically), as float32 when f32;
 * sampled (NULL: none) flags the times that are only time-slice samples for the strategies (plots
 * leave them out); config_yaml (may be NULL) is stored too. */
DG_API dg_status dg_hji_value_write(const char *path, const dg_hji_problem *p, int nt, const double *times,
                                    const unsigned char *sampled, const double *vals, int f32, const char *config_yaml,
                                    dg_err *e);
/* The value dg_hji_value_write would write, opened in memory into v (no file; label names it in
 * messages, e.g. a network's path): a learned value tabulated on p's grid read by everything that
 * reads a value file (dg_hji_plot_value, hji view). Close with dg_hji_value_close. */
DG_API dg_status dg_hji_value_make(const dg_hji_problem *p, int nt, const double *times, const double *vals,
                                   const char *label, dg_hji_value *v, dg_err *e);
/* Bytes dg_hji_value_write allocates for nt times (the writer's copies). */
DG_API double    dg_hji_value_memory(const dg_hji_problem *p, int nt, int f32);
/* Bytes of the value file of nt times (float32 when f32), metadata included (config_bytes: the
 * config's YAML): to refuse a file the disk cannot hold (dg_disk_free) before the solve. */
DG_API double    dg_hji_value_file_bytes(const dg_hji_problem *p, int nt, int f32, double config_bytes);
/* Bytes at the peak of solving p for nt stored times, nland of them landed on by the solve (the
 * rest sampled: dg_hji_problem_solve_slices; nland = nt for a plain dg_hji_solve), and writing its
 * value file (float32 when f32): the target and obstacle, then the larger of the solve
 * (dg_hji_solve_memory, its output included) with the nt stored values, and the nt values with the
 * file's copies. To refuse a grid that cannot fit (dg_mem_check) up front. */
DG_API double    dg_hji_problem_memory(const dg_hji_problem *p, int nt, int nland, int f32);

#ifdef __cplusplus
}
#endif
#endif
