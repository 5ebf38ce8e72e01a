/* difgames io: safetensors files (read and write).
 *
 * The format (https://github.com/huggingface/safetensors), also read by
 * PyTorch and NumPy:
 *
 *   u64 N (little-endian) | N bytes of JSON header | data area
 *
 * The header is one JSON object; each key names a tensor,
 *   "w1": {"dtype": "F32", "shape": [64, 4], "data_offsets": [0, 1024]}
 * with offsets relative to the start of the data area (byte 8 + N), and an
 * optional "__metadata__": {"key": "value", ...} of strings. Tensor data is
 * raw, row-major, little-endian.
 *
 * Reading: dg_st_load() reads the whole file and checks every field before it
 * returns; a file it accepts can be walked without further checks. Tensors
 * point into the loaded buffer and live until dg_st_free().
 *
 *   dg_err e = {0};
 *   dg_st_file *f = dg_st_load("snap.safetensors", &e);
 *   if (!f) { fprintf(stderr, "%s\n", e.msg); return 1; }
 *   float w[64 * 4];
 *   if (dg_st_read_f32(f, "w1", 2, (int64_t[]){64, 4}, w, &e) != DG_OK) ...
 *   dg_st_free(f);
 *
 * Writing: add tensors (copied) and metadata to a writer, then write it in
 * one go; the file appears whole under its name or not at all.
 *
 *   dg_st_writer *w = dg_st_writer_create();
 *   dg_st_writer_add(w, "w1", DG_DTYPE_F32, 2, (int64_t[]){64, 4}, w1, &e);
 *   dg_st_writer_meta(w, "epoch", "120", &e);
 *   dg_st_writer_write(w, "snap.safetensors", &e);
 *   dg_st_writer_free(w);
 */
#ifndef DIFGAMES_SAFETENSORS_H
#define DIFGAMES_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_ST_MAX_DIMS   8                  /* most dims a tensor may have             */
#define DG_ST_MAX_HEADER 100000000u         /* largest header accepted (as safetensors) */

/* Element types, named as in the file ("F32", "BF16", ...). */
typedef enum dg_dtype {
    DG_DTYPE_F32 = 0, DG_DTYPE_F64, DG_DTYPE_F16, DG_DTYPE_BF16, /* floats (F16/BF16 as raw 16-bit words) */
    DG_DTYPE_I64, DG_DTYPE_I32, DG_DTYPE_I16, DG_DTYPE_I8,       /* signed integers */
    DG_DTYPE_U64, DG_DTYPE_U32, DG_DTYPE_U16, DG_DTYPE_U8,       /* unsigned integers */
    DG_DTYPE_BOOL,                                               /* one byte, 0 or 1 */
    DG_DTYPE_COUNT
} dg_dtype;

DG_API const char *dg_dtype_name(dg_dtype t);       /* "F32", ...; "?" for a value out of range  */
DG_API size_t      dg_dtype_size(dg_dtype t);       /* bytes per element; 0 for a value out of range */
DG_API int         dg_dtype_from_name(const char *name); /* a dg_dtype, or -1 if name is unknown */

/* One tensor of a loaded file. Everything points into the file: valid until dg_st_free. */
typedef struct dg_st_tensor {
    const char *name;                       /* NUL-terminated UTF-8                    */
    dg_dtype    dtype;
    int         ndim;                       /* 0 (a scalar) .. DG_ST_MAX_DIMS          */
    int64_t     shape[DG_ST_MAX_DIMS];      /* unused dims are 0                       */
    size_t      numel;                      /* product of shape (1 for a scalar)       */
    const void *data;                       /* little-endian bytes, maybe unaligned    */
    size_t      nbytes;                     /* numel * dg_dtype_size(dtype)            */
} dg_st_tensor;

typedef struct dg_st_file   dg_st_file;
typedef struct dg_st_writer dg_st_writer;

/* ------------------------------------------------------------ reading */

/* Reads and validates a whole file. Returns a new dg_st_file (free it with
 * dg_st_free), or NULL with e filled: DG_ERR_IO if it cannot be read,
 * DG_ERR_FORMAT naming the path, the tensor and the bad field if malformed,
 * DG_ERR_NOMEM if memory runs out. */
DG_API dg_st_file *dg_st_load(const char *path, dg_err *e);

/* Same from memory: buf (len bytes) is copied, so the caller keeps it. label
 * (e.g. a file name; NULL reads as "<memory>") starts every error message.
 * Safe on any input bytes. */
DG_API dg_st_file *dg_st_parse(const void *buf, size_t len, const char *label, dg_err *e);

DG_API void dg_st_free(dg_st_file *f);                                            /* frees f and its tensors; NULL is fine */
DG_API int  dg_st_count(const dg_st_file *f);                                     /* number of tensors (0 for NULL)        */
DG_API const dg_st_tensor *dg_st_get(const dg_st_file *f, int i);                 /* i-th tensor in header order, or NULL  */
DG_API const dg_st_tensor *dg_st_find(const dg_st_file *f, const char *name);     /* tensor by name, or NULL               */
DG_API int  dg_st_meta_count(const dg_st_file *f);                                /* number of metadata entries            */
DG_API const char *dg_st_meta_key(const dg_st_file *f, int i);                    /* i-th metadata key, or NULL            */
DG_API const char *dg_st_meta(const dg_st_file *f, const char *key);              /* metadata value, or NULL if absent     */

/* Copies tensor `name` into out (numel elements of dtype, in host byte order)
 * after checking it exists (else DG_ERR_NOT_FOUND), has that dtype
 * (else DG_ERR_FORMAT) and exactly the shape (ndim, shape) (else
 * DG_ERR_SHAPE); errors name the file, the tensor and expected vs found.
 * out is the caller's; on error it is untouched. Returns DG_OK or the error. */
DG_API dg_status dg_st_read(const dg_st_file *f, const char *name, dg_dtype dtype, int ndim,
                            const int64_t *shape, void *out, dg_err *e);
/* dg_st_read for an F32 tensor. */
DG_API dg_status dg_st_read_f32(const dg_st_file *f, const char *name, int ndim, const int64_t *shape,
                                float *out, dg_err *e);
/* dg_st_read into dtype F32 or F64 from a tensor of either (converted: float32 into double exactly,
 * double into float32 rounded); another dtype as dg_st_read. (The tape's values, dg_real: through
 * difgames/checkpoint.h, DG_DTYPE_REAL and dg_st_read_real.) */
DG_API dg_status dg_st_read_as(const dg_st_file *f, const char *name, dg_dtype dtype, int ndim,
                               const int64_t *shape, void *out, dg_err *e);

/* ------------------------------------------------------------ writing */

/* Returns an empty writer (free with dg_st_writer_free), or NULL if out of memory. */
DG_API dg_st_writer *dg_st_writer_create(void);

/* Adds a tensor: COPIES numel(shape) * dg_dtype_size(dtype) bytes from data
 * (host byte order; may be NULL when there are none), so the caller may reuse
 * data at once. Tensors are written in the order added. Rejects (DG_ERR_ARG)
 * an empty or non-UTF-8 name, "__metadata__", a name already added, ndim
 * outside 0..DG_ST_MAX_DIMS, negative dims and sizes that overflow. */
DG_API dg_status dg_st_writer_add(dg_st_writer *w, const char *name, dg_dtype dtype, int ndim,
                                  const int64_t *shape, const void *data, dg_err *e);

/* Adds a tensor's name, dtype and shape only (checked as dg_st_writer_add): its bytes are the
 * caller's to write into the file at the offset dg_st_writer_header implies (a file written in
 * pieces, e.g. by several processes). dg_st_writer_write refuses a writer holding one. */
DG_API dg_status dg_st_writer_add_layout(dg_st_writer *w, const char *name, dg_dtype dtype, int ndim,
                                         const int64_t *shape, dg_err *e);

/* The file's first *len bytes (malloc'ed into *head, the caller frees): the 8-byte header length
 * and the JSON header. The tensors' bytes (little-endian) follow back to back in the order added:
 * tensor i starts at *len plus the sizes of the tensors before it. */
DG_API dg_status dg_st_writer_header(const dg_st_writer *w, unsigned char **head, size_t *len, dg_err *e);

/* Sets metadata key to value (both copied, UTF-8; a repeated key replaces
 * the old value). Returns DG_OK, DG_ERR_ARG or DG_ERR_NOMEM. */
DG_API dg_status dg_st_writer_meta(dg_st_writer *w, const char *key, const char *value, dg_err *e);

/* Writes everything to path atomically (temporary file, fsync, rename): on
 * error (DG_ERR_IO naming the path) nothing is left behind and an old file at
 * path is untouched. The writer stays valid and may be written again. */
DG_API dg_status dg_st_writer_write(const dg_st_writer *w, const char *path, dg_err *e);

DG_API void dg_st_writer_free(dg_st_writer *w);                                    /* frees w and its copies; NULL is fine */

#ifdef __cplusplus
}
#endif
#endif
