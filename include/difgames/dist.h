/* difgames dist: running across processes with MPI (docs/scale.md).
 *
 * The same program runs alone or under a launcher (mpirun, mpiexec, Slurm's srun): dg_dist_init
 * starts MPI only when a launcher started the process (its environment says so) and the library
 * was built with MPI (DG_MPI, CMake's FindMPI); otherwise everything here is one rank of one and
 * every collective returns its input. Ranks are MPI_COMM_WORLD's.
 *
 * Collectives here are exact (max, min, logical or / and, broadcast, gathers of whole blocks),
 * so what the ranks compute together does not depend on their count. */
#ifndef DIFGAMES_DIST_H
#define DIFGAMES_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Starts MPI if the library has it and a launcher started this process (or DIFGAMES_MPI=1 asks
 * for a singleton); idempotent. Returns the rank count (1 without MPI). */
DG_API int  dg_dist_init(int *argc, char ***argv);
/* Ends MPI if dg_dist_init started it (collective). */
DG_API void dg_dist_finalize(void);
/* 1 if the library was built with MPI. */
DG_API int  dg_dist_built(void);
/* 1 if a launcher (mpirun, mpiexec, srun) started this process: its environment says so. */
DG_API int  dg_dist_launched(void);
DG_API int  dg_dist_rank(void);   /* 0 without MPI */
DG_API int  dg_dist_size(void);   /* 1 without MPI */
/* solo 1: the layers above see one rank of one (dg_dist_rank 0, dg_dist_size 1, collectives do
 * nothing), so that each rank runs work of its own (a sweep's runs); returns the previous setting.
 * dg_dist_world_rank and _size are MPI_COMM_WORLD's whatever solo says. */
DG_API int  dg_dist_solo(int on);
DG_API int  dg_dist_world_rank(void);
DG_API int  dg_dist_world_size(void);
/* A shared queue of items 0, 1, 2, ...: dg_dist_queue_open (collective) starts it at 0 on rank 0,
 * dg_dist_queue_next gives any rank the next item (an atomic fetch-and-add on rank 0's counter:
 * rank 0 hands them out, each to one rank), dg_dist_queue_close (collective) ends it. Alone: a
 * counter. */
DG_API void dg_dist_queue_open(void);
DG_API int  dg_dist_queue_next(void);
DG_API void dg_dist_queue_close(void);
/* The sum of every rank's v (MPI_COMM_WORLD's, whatever solo says). */
DG_API long long dg_dist_sum_int(long long v);

/* Ends every rank's process with code (MPI_Abort), after this rank's message is out. */
DG_API void dg_dist_abort(int code);

/* In place over all ranks (no-ops on one rank). */
DG_API void dg_dist_max(double *v, int n);
DG_API void dg_dist_min(double *v, int n);
DG_API int  dg_dist_or(int flag);                         /* logical or of every rank's flag     */
DG_API void dg_dist_and_bytes(unsigned char *v, size_t n); /* bitwise and of byte arrays          */
DG_API void dg_dist_bcast(void *buf, size_t bytes, int root);
DG_API void dg_dist_barrier(void);

/* Rank 0 receives every rank's block of a distributed array, in rank order, into all (the whole
 * array, bytes[r] from rank r; all and bytes read on rank 0 only); each rank sends mine. */
DG_API dg_status dg_dist_gatherv(const void *mine, size_t my_bytes, void *all, const size_t *bytes, dg_err *e);

/* Every rank receives every rank's block, in rank order, into all (bytes[r] from rank r); mine
 * must already sit at its place in all (after the blocks of the ranks below): in place. */
DG_API dg_status dg_dist_allgatherv(const void *mine, size_t my_bytes, void *all, const size_t *bytes, dg_err *e);

/* Items 0..n-1 (a batch's shards) dealt to the ranks in blocks: this rank's are [*lo, *hi) =
 * [r n / R, (r + 1) n / R) (rank r of R; empty on some ranks when R > n; all n alone). */
DG_API void dg_dist_block(int n, int *lo, int *hi);
/* Every rank's items to every rank, in place: item i has k pieces (piece j at ptr[i k + j], bytes[j]
 * bytes, the same sizes for every item), and the rank that holds item i (dg_dist_block) sends them
 * to the others (collective; MPI_Allgatherv of exact copies, no arithmetic), so each rank can then
 * sum the n items in one fixed order and get the bits one process gets. Alone: nothing to do.
 * DG_ERR_NOMEM, or DG_ERR_ARG when a rank's items pass MPI's 2 GiB counts. */
DG_API dg_status dg_dist_share_blocks(int n, int k, void *const *ptr, const size_t *bytes, dg_err *e);

/* A file every rank writes at once (MPI-IO; one rank: plain writes). dg_dist_file_open opens the
 * existing file path for writing on every rank (collective); dg_dist_file_write_at writes bytes
 * at offset, each rank its own piece (collective: every rank calls it, bytes 0 allowed; pieces
 * over 2^31 bytes go in several calls); dg_dist_file_close syncs the file to the disk and closes
 * it (collective, also after a failure). A failure on any rank is every rank's: each returns
 * DG_ERR_IO naming path, so that the ranks stay in step. */
typedef struct dg_dist_file dg_dist_file;
DG_API dg_status dg_dist_file_open(dg_dist_file **f, const char *path, dg_err *e);
DG_API dg_status dg_dist_file_write_at(dg_dist_file *f, uint64_t offset, const void *buf, size_t bytes, dg_err *e);
DG_API dg_status dg_dist_file_close(dg_dist_file *f, dg_err *e);
/* Each rank writes its box of a row-major array of nd axes (size[k] elements of elem bytes along
 * axis k; the box: sub[k] from start[k], held row-major in buf) into the file from offset
 * (collective: MPI_File_write_all through a subarray file view; every rank calls it). The box's
 * rows (sub[0] x ... x sub[nd-2]) under 2^31, a row's bytes too. */
DG_API dg_status dg_dist_file_write_box(dg_dist_file *f, uint64_t offset, int nd, const int *size, const int *sub,
                                        const int *start, size_t elem, const void *buf, dg_err *e);

/* A halo exchange along one axis of a Cartesian topology: the ranks' blocks laid end to end in
 * rank order form one line of elements (elem bytes each), a ring when the topology is periodic
 * (left >= 0 on rank 0). This rank's block starts at lo_own and ends count elements after hi_own
 * (count < 2^31); lo_ghost receives the count elements before it and hi_ghost the count after it,
 * from whichever ranks hold them (several when blocks are shorter than count; beyond the ends of
 * a line nothing is written). Non-blocking sends and receives: dg_dist_halo_start posts them
 * (collective: every rank calls it with the same count), dg_dist_halo_wait completes them (at
 * most one exchange in flight). */
DG_API void dg_dist_halo_start(void *lo_ghost, const void *lo_own, const void *hi_own, void *hi_ghost, size_t count,
                               size_t elem, int left, int right);
DG_API void dg_dist_halo_wait(void);
/* Pieces of an exchange between direct neighbours, added to the one in flight (dg_dist_halo_wait
 * completes them with it): a non-blocking receive of count elements (elem bytes each, count <
 * 2^31) from rank from into buf, a non-blocking send of count from buf to rank to; the sender's
 * tag (0 to 99) is the receiver's; a rank of -1 posts nothing. At most 64 pieces in flight. */
DG_API void dg_dist_halo_recv(void *buf, size_t count, size_t elem, int from, int tag);
DG_API void dg_dist_halo_send(const void *buf, size_t count, size_t elem, int to, int tag);

/* A Cartesian topology of nd axes, dims[k] ranks along axis k (their product the rank count),
 * periodic[k] (nd <= 16; MPI_Cart_create, not reordered): this rank's coordinates and its neighbours below
 * and above along each axis (world ranks, -1: none). One rank: coordinates 0, no neighbours. */
DG_API void dg_dist_cart(int nd, const int *dims, const int *periodic, int *coords, int *lo, int *hi);

/* The face halo exchange of a block stored with its ghost layers (row-major, size[k] elements of
 * elem bytes along axis k, ghosts included; gw[k] ghost layers on both sides of axis k, 0 where
 * axis k is not cut): axis after axis, the gw[k] layers inside each face go to the neighbour
 * there (lo[k], hi[k] from dg_dist_cart; -1: none, the ghosts stay) and its layers fill the
 * ghosts, whole faces with the ghosts of the axes before, so edges and corners arrive too.
 * Collective over the topology, blocking. size[k] and the block's bytes within int's range. */
DG_API void dg_dist_halo_faces(void *a, int nd, const int *size, const int *gw, size_t elem, const int *lo, const int *hi);

/* A 1-D Cartesian topology of the ranks over n cells (periodic or not): this rank's neighbours
 * (world ranks, -1 for none; MPI_Cart_create / MPI_Cart_shift, not reordered). */
DG_API void dg_dist_cart1(int periodic, int *left, int *right);

#ifdef __cplusplus
}
#endif
#endif
