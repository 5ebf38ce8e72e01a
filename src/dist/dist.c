/* MPI for the layers above (include/difgames/dist.h): started only under a launcher, so that the
 * same binary runs alone without it; built without MPI, every call is one rank's. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/dist.h"
#ifndef DG_HAVE_MPI
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#endif

/* A launcher's environment: Open MPI's mpirun / prterun, PMIx (srun --mpi=pmix), PMI (MPICH's
 * hydra, srun --mpi=pmi2). */
int dg_dist_launched(void) {
    static const char *const VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++)
        if (getenv(VARS[i])) return 1;
    return 0;
}

#ifdef DG_HAVE_MPI
#include <mpi.h>

static int started, rank_, size_ = 1, solo;
static MPI_Win queue_win = MPI_WIN_NULL;
static int queue_next;
static MPI_Datatype halo_type;
static long long *halo_len, *halo_off, *halo_pairs;   /* the blocks' layout (dg_dist_halo_start) */
static MPI_Request *halo_reqs;
static int halo_n;

/* Started by a launcher, or asked for a singleton. */
static int launched(void) {
    if (dg_dist_launched()) return 1;
    const char *s = getenv("DIFGAMES_MPI");
    return s && !strcmp(s, "1");
}

int dg_dist_init(int *argc, char ***argv) {
    int on = 0;
    MPI_Initialized(&on);
    if (on) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        return size_;
    }
    if (!launched()) return 1;
    int provided = 0;
    /* OpenMP threads never call MPI: only the main thread does */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
    started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    return size_;
}

void dg_dist_finalize(void) {
    int done = 0;
    if (!started) return;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
    started = 0;
    free(halo_len);
    free(halo_reqs);
    halo_len = halo_off = halo_pairs = NULL;
    halo_reqs = NULL;
}

int dg_dist_built(void) { return 1; }
int dg_dist_rank(void) { return started && !solo ? rank_ : 0; }
int dg_dist_size(void) { return started && !solo ? size_ : 1; }
int dg_dist_world_rank(void) { return started ? rank_ : 0; }
int dg_dist_world_size(void) { return started ? size_ : 1; }

int dg_dist_solo(int on) {
    const int was = solo;
    solo = on != 0;
    return was;
}

/* The queue: one int on rank 0 that every rank fetches and increments (MPI_Fetch_and_op, an
 * atomic of MPI's one-sided communication): rank 0 hands the items out, taking some itself. */
void dg_dist_queue_open(void) {
    if (dg_dist_world_size() == 1) {
        queue_next = 0;
        return;
    }
    queue_next = 0;
    MPI_Win_create(rank_ == 0 ? &queue_next : NULL, rank_ == 0 ? (MPI_Aint)sizeof queue_next : 0,
                   (int)sizeof queue_next, MPI_INFO_NULL, MPI_COMM_WORLD, &queue_win);
}

int dg_dist_queue_next(void) {
    if (dg_dist_world_size() == 1) return queue_next++;
    int one = 1, got = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, queue_win);
    MPI_Fetch_and_op(&one, &got, MPI_INT, 0, 0, MPI_SUM, queue_win);
    MPI_Win_unlock(0, queue_win);
    return got;
}

long long dg_dist_sum_int(long long v) {
    if (dg_dist_world_size() > 1) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return v;
}

void dg_dist_queue_close(void) {
    if (dg_dist_world_size() == 1 || queue_win == MPI_WIN_NULL) return;
    MPI_Win_free(&queue_win);   /* collective: every rank is done with it */
}

void dg_dist_abort(int code) {
    fflush(stdout);
    fflush(stderr);
    if (started && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

void dg_dist_max(double *v, int n) {
    if (dg_dist_size() > 1) MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

void dg_dist_min(double *v, int n) {
    if (dg_dist_size() > 1) MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
}

int dg_dist_or(int flag) {
    if (dg_dist_size() > 1) MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return flag != 0;
}

void dg_dist_and_bytes(unsigned char *v, size_t n) {
    while (dg_dist_size() > 1 && n) {
        const int c = n > INT_MAX ? INT_MAX : (int)n;
        MPI_Allreduce(MPI_IN_PLACE, v, c, MPI_UNSIGNED_CHAR, MPI_BAND, MPI_COMM_WORLD);
        v += c;
        n -= (size_t)c;
    }
}

void dg_dist_bcast(void *buf, size_t bytes, int root) {
    unsigned char *b = buf;
    while (dg_dist_size() > 1 && bytes) {
        const int c = bytes > INT_MAX ? INT_MAX : (int)bytes;
        MPI_Bcast(b, c, MPI_BYTE, root, MPI_COMM_WORLD);
        b += c;
        bytes -= (size_t)c;
    }
}

void dg_dist_barrier(void) {
    if (dg_dist_world_size() > 1) MPI_Barrier(MPI_COMM_WORLD);
}

/* Blocks of up to 1 GiB a message: counts are ints. */
#define CHUNK ((size_t)1 << 30)

dg_status dg_dist_gatherv(const void *mine, size_t my_bytes, void *all, const size_t *bytes, dg_err *e) {
    if (dg_dist_size() == 1) {
        if (all != mine && my_bytes) memmove(all, mine, my_bytes);
        return DG_OK;
    }
    if (rank_ == 0) {
        unsigned char *dst = all;
        if (my_bytes) memmove(dst, mine, my_bytes);
        dst += my_bytes;
        for (int r = 1; r < size_; r++) {
            for (size_t off = 0; off < bytes[r]; off += CHUNK) {
                const size_t c = bytes[r] - off < CHUNK ? bytes[r] - off : CHUNK;
                MPI_Recv(dst + off, (int)c, MPI_BYTE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            dst += bytes[r];
        }
        (void)e;
        return DG_OK;
    }
    for (size_t off = 0; off < my_bytes; off += CHUNK) {
        const size_t c = my_bytes - off < CHUNK ? my_bytes - off : CHUNK;
        MPI_Send((const unsigned char *)mine + off, (int)c, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
    return DG_OK;
}

dg_status dg_dist_allgatherv(const void *mine, size_t my_bytes, void *all, const size_t *bytes, dg_err *e) {
    if (dg_dist_size() == 1) {
        if (all != mine && my_bytes) memmove(all, mine, my_bytes);
        return DG_OK;
    }
    int *cnt = malloc((size_t)size_ * 2 * sizeof *cnt);
    if (!cnt) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    size_t at = 0;
    for (int r = 0; r < size_; r++) {
        if (bytes[r] > INT_MAX || at > INT_MAX) {
            free(cnt);
            return dg_err_set(e, DG_ERR_ARG, "an exchange of %zu bytes passes MPI's 2 GiB counts", at + bytes[r]);
        }
        cnt[r] = (int)bytes[r];
        cnt[size_ + r] = (int)at;
        at += bytes[r];
    }
    /* mine already sits at its place in all (MPI_IN_PLACE) */
    (void)mine;
    (void)my_bytes;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, cnt, cnt + size_, MPI_BYTE, MPI_COMM_WORLD);
    free(cnt);
    return DG_OK;
}

/* One piece of a ghost range: elements [a, b) of the ring (or line) of blocks, landing at
 * element at of the ghost buffer. */
typedef struct halo_piece { long long a, b, at; } halo_piece;

/* The pieces of the ghost range [from, from + count) of the line of total elements (periodic: a
 * ring, count <= total): at most two, each within [0, total). */
static int halo_pieces(long long from, long long count, long long total, int periodic, halo_piece *pc) {
    int n = 0;
    long long j = 0;
    while (j < count && n < 4) {
        long long p = from + j, len = count - j;
        if (periodic) {
            p = ((p % total) + total) % total;
            if (len > total - p) len = total - p;
        } else if (p < 0) {   /* beyond the grid's low end: never read (the kernel extrapolates) */
            j += len < -p ? len : -p;
            continue;
        } else if (p >= total) {
            break;
        } else if (len > total - p) {
            len = total - p;
        }
        pc[n++] = (halo_piece){p, p + len, j};
        j += len;
    }
    return n;
}

/* The layout of the blocks (each rank's length and first element, rank 0's ring flag) and the
 * requests in flight (one exchange at a time): allocated at the first exchange, kept. Requests:
 * each side's range has at most two pieces, which together meet at most size + 1 blocks (this
 * rank's own is copied); this block meets each other rank's two ranges in at most four pieces. */
static void halo_alloc(void) {
    if (halo_reqs) return;
    halo_len = malloc((size_t)size_ * 4 * sizeof *halo_len);
    halo_reqs = malloc(((size_t)size_ * 6 + 4) * sizeof *halo_reqs);
    /* a few bytes a rank: failing here is failing as MPI itself does (MPI_ERRORS_ARE_FATAL) */
    if (!halo_len || !halo_reqs) MPI_Abort(MPI_COMM_WORLD, 3);
    halo_off = halo_len + size_;
    halo_pairs = halo_off + size_;
}

void dg_dist_halo_start(void *lo_ghost, const void *lo_own, const void *hi_own, void *hi_ghost, size_t count,
                        size_t elem, int left, int right) {
    halo_n = 0;
    if (dg_dist_size() == 1 || !count) return;
    (void)right;
    halo_alloc();
    /* every rank's block length and whether the blocks form a ring (rank 0 has a left neighbour):
     * a block may be shorter than the ghost range, whose elements then come from several ranks */
    const long long c = (long long)count;
    const long long mine = (long long)(((const char *)hi_own - (const char *)lo_own) / (ptrdiff_t)elem) + c;
    long long me[2] = {mine, left >= 0}, *len = halo_len, *off = halo_off, total = 0;
    MPI_Allgather(me, 2, MPI_LONG_LONG, halo_pairs, 2, MPI_LONG_LONG, MPI_COMM_WORLD);
    for (int r = 0; r < size_; r++) {
        len[r] = halo_pairs[2 * r];
        off[r] = total;
        total += len[r];
    }
    const int periodic = halo_pairs[1] != 0;
    /* counts are ints: elements of elem bytes (the caller keeps count under INT_MAX: dg_hji_part_init) */
    MPI_Type_contiguous((int)elem, MPI_BYTE, &halo_type);
    MPI_Type_commit(&halo_type);
    halo_piece pc[4];
    /* receives (tag 1: a low ghost, 2: a high ghost); a piece this rank holds itself is copied */
    for (int side = 0; side < 2; side++) {
        const long long from = side == 0 ? off[rank_] - c : off[rank_] + mine;
        char *dst = side == 0 ? lo_ghost : hi_ghost;
        const int np = halo_pieces(from, c, total, periodic, pc);
        for (int i = 0; i < np; i++)
            for (int r = 0; r < size_; r++) {
                const long long a = pc[i].a > off[r] ? pc[i].a : off[r];
                const long long b = pc[i].b < off[r] + len[r] ? pc[i].b : off[r] + len[r];
                if (a >= b) continue;
                char *to = dst + (size_t)(pc[i].at + a - pc[i].a) * elem;
                if (r == rank_)
                    memcpy(to, (const char *)lo_own + (size_t)(a - off[rank_]) * elem, (size_t)(b - a) * elem);
                else
                    MPI_Irecv(to, (int)(b - a), halo_type, r, 1 + side, MPI_COMM_WORLD, &halo_reqs[halo_n++]);
            }
    }
    /* sends: the parts of this block in every other rank's ghost ranges, in the order that rank
     * posts its receives (the same pieces, the same loop), so that messages match in order */
    for (int r = 0; r < size_; r++) {
        if (r == rank_) continue;
        for (int side = 0; side < 2; side++) {
            const long long from = side == 0 ? off[r] - c : off[r] + len[r];
            const int np = halo_pieces(from, c, total, periodic, pc);
            for (int i = 0; i < np; i++) {
                const long long a = pc[i].a > off[rank_] ? pc[i].a : off[rank_];
                const long long b = pc[i].b < off[rank_] + mine ? pc[i].b : off[rank_] + mine;
                if (a < b)
                    MPI_Isend((const char *)lo_own + (size_t)(a - off[rank_]) * elem, (int)(b - a), halo_type, r,
                              1 + side, MPI_COMM_WORLD, &halo_reqs[halo_n++]);
            }
        }
    }
    MPI_Type_free(&halo_type);   /* the pending operations keep it alive */
}

/* Point-to-point pieces of an exchange (dg_dist_halo_recv, _send): at most 4 a cut axis. */
static MPI_Request piece_reqs[4 * 16];
static int piece_n;

static void halo_piece_post(void *buf, size_t count, size_t elem, int peer, int tag, int send) {
    if (dg_dist_size() == 1 || peer < 0 || !count) return;
    if (piece_n >= (int)(sizeof piece_reqs / sizeof piece_reqs[0])) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Datatype t;
    MPI_Type_contiguous((int)elem, MPI_BYTE, &t);   /* counts are elements (the caller keeps them under INT_MAX) */
    MPI_Type_commit(&t);
    if (send) MPI_Isend(buf, (int)count, t, peer, 100 + tag, MPI_COMM_WORLD, &piece_reqs[piece_n++]);
    else MPI_Irecv(buf, (int)count, t, peer, 100 + tag, MPI_COMM_WORLD, &piece_reqs[piece_n++]);
    MPI_Type_free(&t);   /* the pending operation keeps it alive */
}

void dg_dist_halo_recv(void *buf, size_t count, size_t elem, int from, int tag) {
    halo_piece_post(buf, count, elem, from, tag, 0);
}

void dg_dist_halo_send(const void *buf, size_t count, size_t elem, int to, int tag) {
    halo_piece_post((void *)buf, count, elem, to, tag, 1);
}

void dg_dist_halo_wait(void) {
    if (halo_n) MPI_Waitall(halo_n, halo_reqs, MPI_STATUSES_IGNORE);
    halo_n = 0;
    if (piece_n) MPI_Waitall(piece_n, piece_reqs, MPI_STATUSES_IGNORE);
    piece_n = 0;
}

/* ---------------------------------------------------------------- MPI-IO */

struct dg_dist_file {
    MPI_File fh;
    int      failed;             /* a write failed on this rank */
    char     path[4096];
};

/* The or of every rank's failure, with this rank's message or the others'. */
static dg_status file_agree(dg_dist_file *f, int bad, const char *what, int code, dg_err *e) {
    const int any = dg_dist_or(bad);
    if (!any) return DG_OK;
    if (bad) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (code != MPI_SUCCESS) MPI_Error_string(code, msg, &len);
        return dg_err_set(e, DG_ERR_IO, "%s: %s failed on rank %d%s%s", f->path, what, rank_, len ? ": " : "", msg);
    }
    return dg_err_set(e, DG_ERR_IO, "%s: %s failed on another rank", f->path, what);
}

dg_status dg_dist_file_open(dg_dist_file **out, const char *path, dg_err *e) {
    *out = NULL;
    dg_dist_file *f = calloc(1, sizeof *f);
    const int nomem = dg_dist_or(!f || strlen(path) >= sizeof f->path);
    if (nomem) {
        free(f);
        return dg_err_set(e, DG_ERR_IO, "%s: cannot open for the ranks' writes (out of memory, or a long name)",
                          path);
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    const int rc = MPI_File_open(dg_dist_size() > 1 ? MPI_COMM_WORLD : MPI_COMM_SELF, f->path, MPI_MODE_WRONLY,
                                 MPI_INFO_NULL, &f->fh);
    dg_status s = file_agree(f, rc != MPI_SUCCESS, "opening for the ranks' writes", rc, e);
    if (s != DG_OK) {
        if (rc == MPI_SUCCESS) MPI_File_close(&f->fh);
        free(f);
        return s;
    }
    *out = f;
    return DG_OK;
}

dg_status dg_dist_file_write_at(dg_dist_file *f, uint64_t offset, const void *buf, size_t bytes, dg_err *e) {
    /* the same count of collective calls on every rank: the most chunks of any */
    double n = (double)((bytes + CHUNK - 1) / CHUNK);
    dg_dist_max(&n, 1);
    int bad = 0, code = MPI_SUCCESS;
    for (size_t k = 0; k < (size_t)n; k++) {
        const size_t at = k * CHUNK, c = at < bytes ? (bytes - at < CHUNK ? bytes - at : CHUNK) : 0;
        MPI_Status st;
        const int rc = MPI_File_write_at_all(f->fh, (MPI_Offset)(offset + at), (const char *)buf + (c ? at : 0),
                                             (int)c, MPI_BYTE, &st);
        int got = 0;
        if (rc == MPI_SUCCESS) MPI_Get_count(&st, MPI_BYTE, &got);
        if (!bad && (rc != MPI_SUCCESS || (size_t)got != c)) {
            bad = 1;
            code = rc;
        }
    }
    f->failed |= bad;
    return file_agree(f, bad, "writing", code, e);
}

dg_status dg_dist_file_write_box(dg_dist_file *f, uint64_t offset, int nd, const int *size, const int *sub,
                                 const int *start, size_t elem, const void *buf, dg_err *e) {
    long long rows = 1;   /* the box's rows (its last axis) are the memory's units: counts stay ints */
    for (int k = 0; k < nd - 1; k++) rows *= sub[k];
    MPI_Datatype el, ft, mt;
    MPI_Type_contiguous((int)elem, MPI_BYTE, &el);
    MPI_Type_commit(&el);
    MPI_Type_create_subarray(nd, size, sub, start, MPI_ORDER_C, el, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_contiguous(sub[nd - 1], el, &mt);
    MPI_Type_commit(&mt);
    int bad = rows >= INT_MAX, code = MPI_SUCCESS;
    int rc = bad ? MPI_SUCCESS : MPI_File_set_view(f->fh, (MPI_Offset)offset, el, ft, "native", MPI_INFO_NULL);
    if (!bad && rc == MPI_SUCCESS) {
        MPI_Status st;
        rc = MPI_File_write_all(f->fh, buf, (int)rows, mt, &st);
        int got = 0;
        if (rc == MPI_SUCCESS) MPI_Get_count(&st, mt, &got);
        bad = rc != MPI_SUCCESS || got != (int)rows;
        code = rc;
        rc = MPI_File_set_view(f->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);   /* back to bytes */
    }
    if (!bad && rc != MPI_SUCCESS) {
        bad = 1;
        code = rc;
    }
    MPI_Type_free(&mt);
    MPI_Type_free(&ft);
    MPI_Type_free(&el);
    f->failed |= bad;
    return file_agree(f, bad, "writing", code, e);
}

dg_status dg_dist_file_close(dg_dist_file *f, dg_err *e) {
    if (!f) return DG_OK;
    const int rs = MPI_File_sync(f->fh);
    const int rc = MPI_File_close(&f->fh);
    dg_status s = file_agree(f, rs != MPI_SUCCESS || rc != MPI_SUCCESS, "syncing to the disk",
                             rs != MPI_SUCCESS ? rs : rc, e);
    free(f);
    return s;
}

void dg_dist_cart(int nd, const int *dims, const int *periodic, int *coords, int *lo, int *hi) {
    for (int k = 0; k < nd; k++) {
        coords[k] = 0;
        lo[k] = hi[k] = -1;
    }
    if (dg_dist_size() == 1) return;
    int d[16], per[16];
    for (int k = 0; k < nd && k < 16; k++) {
        d[k] = dims[k];
        per[k] = periodic[k] != 0;
    }
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, nd, d, per, 0, &cart);
    MPI_Cart_coords(cart, rank_, nd, coords);
    for (int k = 0; k < nd; k++) {
        int a = MPI_PROC_NULL, b = MPI_PROC_NULL;
        MPI_Cart_shift(cart, k, 1, &a, &b);
        lo[k] = a == MPI_PROC_NULL ? -1 : a;
        hi[k] = b == MPI_PROC_NULL ? -1 : b;
    }
    MPI_Comm_free(&cart);
}

void dg_dist_halo_faces(void *a, int nd, const int *size, const int *gw, size_t elem, const int *lo, const int *hi) {
    if (dg_dist_size() == 1) return;
    MPI_Datatype el;
    MPI_Type_contiguous((int)elem, MPI_BYTE, &el);
    MPI_Type_commit(&el);
    for (int k = 0; k < nd; k++) {
        if (gw[k] < 1) continue;
        int sub[16], st[4][16];
        for (int j = 0; j < nd; j++) {
            sub[j] = size[j];
            st[0][j] = st[1][j] = st[2][j] = st[3][j] = 0;
        }
        sub[k] = gw[k];
        st[0][k] = gw[k];                  /* sent down: the layers inside the low face */
        st[1][k] = size[k] - gw[k];        /* received from above: the high ghosts      */
        st[2][k] = size[k] - 2 * gw[k];    /* sent up: the layers inside the high face  */
        st[3][k] = 0;                      /* received from below: the low ghosts       */
        MPI_Datatype t[4];
        for (int q = 0; q < 4; q++) {
            MPI_Type_create_subarray(nd, size, sub, st[q], MPI_ORDER_C, el, &t[q]);
            MPI_Type_commit(&t[q]);
        }
        const int down = lo[k] < 0 ? MPI_PROC_NULL : lo[k], up = hi[k] < 0 ? MPI_PROC_NULL : hi[k];
        MPI_Sendrecv(a, 1, t[0], down, 40 + 2 * k, a, 1, t[1], up, 40 + 2 * k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(a, 1, t[2], up, 41 + 2 * k, a, 1, t[3], down, 41 + 2 * k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int q = 0; q < 4; q++) MPI_Type_free(&t[q]);
    }
    MPI_Type_free(&el);
}

void dg_dist_cart1(int periodic, int *left, int *right) {
    *left = *right = -1;
    if (dg_dist_size() == 1) return;
    MPI_Comm cart;
    int dims[1] = {size_}, periods[1] = {periodic != 0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
    MPI_Cart_shift(cart, 0, 1, &lo, &hi);
    MPI_Comm_free(&cart);
    *left = lo == MPI_PROC_NULL ? -1 : lo;
    *right = hi == MPI_PROC_NULL ? -1 : hi;
}

#else  /* built without MPI: one rank */

int  dg_dist_init(int *argc, char ***argv) { (void)argc; (void)argv; return 1; }
void dg_dist_finalize(void) {}
int  dg_dist_built(void) { return 0; }
int  dg_dist_rank(void) { return 0; }
int  dg_dist_size(void) { return 1; }
int  dg_dist_world_rank(void) { return 0; }
int  dg_dist_world_size(void) { return 1; }
int  dg_dist_solo(int on) { (void)on; return 0; }
static int queue_next;
void dg_dist_queue_open(void) { queue_next = 0; }
int  dg_dist_queue_next(void) { return queue_next++; }
void dg_dist_queue_close(void) {}
long long dg_dist_sum_int(long long v) { return v; }
void dg_dist_abort(int code) { fflush(stdout); fflush(stderr); exit(code); }
void dg_dist_max(double *v, int n) { (void)v; (void)n; }
void dg_dist_min(double *v, int n) { (void)v; (void)n; }
int  dg_dist_or(int flag) { return flag != 0; }
void dg_dist_and_bytes(unsigned char *v, size_t n) { (void)v; (void)n; }
void dg_dist_bcast(void *buf, size_t bytes, int root) { (void)buf; (void)bytes; (void)root; }
void dg_dist_barrier(void) {}
dg_status dg_dist_gatherv(const void *mine, size_t my_bytes, void *all, const size_t *bytes, dg_err *e) {
    (void)bytes; (void)e;
    if (all != mine && my_bytes) memmove(all, mine, my_bytes);
    return DG_OK;
}
dg_status dg_dist_allgatherv(const void *mine, size_t my_bytes, void *all, const size_t *bytes, dg_err *e) {
    (void)bytes; (void)e;
    if (all != mine && my_bytes) memmove(all, mine, my_bytes);
    return DG_OK;
}
void dg_dist_halo_start(void *lo_ghost, const void *lo_own, const void *hi_own, void *hi_ghost, size_t count,
                        size_t elem, int left, int right) {
    (void)lo_ghost; (void)lo_own; (void)hi_own; (void)hi_ghost; (void)count; (void)elem; (void)left; (void)right;
}
void dg_dist_halo_wait(void) {}
void dg_dist_halo_recv(void *buf, size_t count, size_t elem, int from, int tag) {
    (void)buf; (void)count; (void)elem; (void)from; (void)tag;
}
void dg_dist_halo_send(const void *buf, size_t count, size_t elem, int to, int tag) {
    (void)buf; (void)count; (void)elem; (void)to; (void)tag;
}
void dg_dist_cart1(int periodic, int *left, int *right) { (void)periodic; *left = *right = -1; }
void dg_dist_cart(int nd, const int *dims, const int *periodic, int *coords, int *lo, int *hi) {
    (void)dims; (void)periodic;
    for (int k = 0; k < nd; k++) { coords[k] = 0; lo[k] = hi[k] = -1; }
}
void dg_dist_halo_faces(void *a, int nd, const int *size, const int *gw, size_t elem, const int *lo, const int *hi) {
    (void)a; (void)nd; (void)size; (void)gw; (void)elem; (void)lo; (void)hi;
}

/* one rank: plain writes */
struct dg_dist_file { int fd; char path[4096]; };
dg_status dg_dist_file_open(dg_dist_file **out, const char *path, dg_err *e) {
    *out = NULL;
    dg_dist_file *f = calloc(1, sizeof *f);
    if (!f || strlen(path) >= sizeof f->path) {
        free(f);
        return dg_err_set(e, DG_ERR_IO, "%s: cannot open (out of memory, or a long name)", path);
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    if ((f->fd = open(path, O_WRONLY)) < 0) {
        const int err = errno;
        free(f);
        return dg_err_set(e, DG_ERR_IO, "%s: cannot open: %s", path, strerror(err));
    }
    *out = f;
    return DG_OK;
}
dg_status dg_dist_file_write_at(dg_dist_file *f, uint64_t offset, const void *buf, size_t bytes, dg_err *e) {
    const char *b = buf;
    while (bytes) {
        const ssize_t w = pwrite(f->fd, b, bytes, (off_t)offset);
        if (w <= 0) return dg_err_set(e, DG_ERR_IO, "%s: write failed: %s", f->path, strerror(w < 0 ? errno : EIO));
        b += w;
        offset += (uint64_t)w;
        bytes -= (size_t)w;
    }
    return DG_OK;
}
dg_status dg_dist_file_write_box(dg_dist_file *f, uint64_t offset, int nd, const int *size, const int *sub,
                                 const int *start, size_t elem, const void *buf, dg_err *e) {
    long long rows = 1;
    for (int k = 0; k < nd - 1; k++) rows *= sub[k];
    const size_t len = (size_t)sub[nd - 1] * elem;
    for (long long r = 0; r < rows; r++) {   /* row r of the box at its place in the array */
        long long rest = r, at = 0, st = 1;
        for (int k = nd - 1; k >= 0; k--) {
            const long long i = k == nd - 1 ? 0 : rest % sub[k];
            if (k < nd - 1) rest /= sub[k];
            at += (start[k] + i) * st;
            st *= size[k];
        }
        dg_status s = dg_dist_file_write_at(f, offset + (uint64_t)at * elem, (const char *)buf + (size_t)r * len, len, e);
        if (s) return s;
    }
    return DG_OK;
}
dg_status dg_dist_file_close(dg_dist_file *f, dg_err *e) {
    if (!f) return DG_OK;
    int bad = fsync(f->fd) != 0 && errno != EINVAL;
    int err = errno;
    if (close(f->fd) != 0 && !bad) { bad = 1; err = errno; }
    dg_status s = bad ? dg_err_set(e, DG_ERR_IO, "%s: write failed: %s", f->path, strerror(err)) : DG_OK;
    free(f);
    return s;
}


#endif

/* ------------------------------------------------------------------ blocks of items (both builds) */

void dg_dist_block(int n, int *lo, int *hi) {
    const int R = dg_dist_size(), r = dg_dist_rank();
    *lo = (int)((int64_t)r * n / R);
    *hi = (int)((int64_t)(r + 1) * n / R);
}

/* Packs this rank's items at their place in one buffer (rank order is item order), gathers every
 * rank's part in place, and copies the others' items out. */
dg_status dg_dist_share_blocks(int n, int k, void *const *ptr, const size_t *bytes, dg_err *e) {
    const int R = dg_dist_size(), me = dg_dist_rank();
    if (R == 1 || n < 1 || k < 1) return DG_OK;
    size_t one = 0;
    for (int j = 0; j < k; j++) one += bytes[j];
    size_t *part = malloc((size_t)R * sizeof *part);
    unsigned char *buf = malloc((size_t)n * one + 1);
    if (!part || !buf) {
        free(part), free(buf);
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the exchange of %d items of %zu bytes", n, one);
    }
    for (int r = 0; r < R; r++) part[r] = (size_t)((int64_t)(r + 1) * n / R - (int64_t)r * n / R) * one;
    int lo, hi;
    dg_dist_block(n, &lo, &hi);
    unsigned char *q = buf + (size_t)lo * one;
    for (int i = lo; i < hi; i++)
        for (int j = 0; j < k; j++) {
            memcpy(q, ptr[(size_t)i * k + j], bytes[j]);
            q += bytes[j];
        }
    dg_status st = dg_dist_allgatherv(buf + (size_t)lo * one, part[me], buf, part, e);
    q = buf;
    for (int i = 0; st == DG_OK && i < n; i++)
        for (int j = 0; j < k; j++) {
            if (i < lo || i >= hi) memcpy(ptr[(size_t)i * k + j], q, bytes[j]);
            q += bytes[j];
        }
    free(part), free(buf);
    return st;
}
