/* difgames io: whole-file writes that never leave a half-written file, whole-
 * file reads that refuse what is not a regular file, paths and run folders.
 *
 * dg_file_begin opens "<path>.tmp.<pid>" in the target's folder; the caller
 * writes to f->fp; dg_file_commit flushes, fsyncs and renames it over path
 * (killed at any instant, path holds the old file or the new one, whole).
 * dg_file_abort removes the temporary file. No link is followed: the temporary
 * is created new (O_CREAT | O_EXCL | O_NOFOLLOW, after removing any name planted
 * there), and the rename replaces a link at path instead of writing through it.
 * A child process may write the temporary through fileno(f->fp) (the compiled
 * models' compiler log does).
 *
 * Every file the library reads is opened by dg_file_open_read: a FIFO, a
 * device (/dev/zero, /dev/stdin) or a folder is refused before a byte is read,
 * and the open itself cannot block on a FIFO.
 *
 * A run folder is held by dg_dir_lock for the run's life (an flock on
 * "<dir>/.lock"): a second run into the same folder is refused while the first
 * holds it; the lock goes with the process, however it ends. dg_dir_unlock
 * removes .lock; a process that dies without it leaves a stale .lock, which
 * the next dg_dir_lock takes over. A process killed
 * before its commit leaves its temporary file; dg_dir_clean removes those.
 */
#ifndef DIFGAMES_FILEIO_H
#define DIFGAMES_FILEIO_H

#include <stdio.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_PATH_MAX 4096   /* longest path the library handles (Linux PATH_MAX) */

typedef struct dg_file {
    FILE *fp;
    char  path[DG_PATH_MAX];        /* final name        */
    char  tmp[DG_PATH_MAX + 32];    /* temporary name    */
} dg_file;

DG_API dg_status dg_file_begin(dg_file *f, const char *path, dg_err *e);  /* opens the temporary file */
DG_API dg_status dg_file_commit(dg_file *f, dg_err *e);                   /* flush, fsync, rename     */
DG_API void      dg_file_abort(dg_file *f);                               /* close and remove tmp     */
/* Opens path for reading if it is a regular file ("rb"); *size gets its size
 * (NULL: not wanted). Refuses FIFOs, devices and folders without blocking. */
DG_API dg_status dg_file_open_read(const char *path, FILE **fp, size_t *size, dg_err *e);
/* Reads a whole file into a malloc'd buffer (caller frees); adds a NUL after it. A file whose
 * size does not fit in memory (dg_mem_check) is refused before anything is allocated or read
 * (DG_ERR_ARG naming the file). */
DG_API dg_status dg_file_read_all(const char *path, unsigned char **out, size_t *len, dg_err *e);
/* The same, refusing (DG_ERR_ARG naming the file and the bound) a file of more than max bytes. */
DG_API dg_status dg_file_read_max(const char *path, size_t max, unsigned char **out, size_t *len, dg_err *e);
/* DG_OK when path can name a file written by dg_file_begin: not empty, its temporary name
 * "<path>.tmp.<pid>" shorter than DG_PATH_MAX and its last name within NAME_MAX, every folder
 * name within NAME_MAX; else DG_ERR_ARG saying which. To check an output before a long job. */
DG_API dg_status dg_file_name_ok(const char *path, dg_err *e);
/* Makes a folder and its parents (like mkdir -p). */
DG_API dg_status dg_mkdirs(const char *path, dg_err *e);
/* Before a long job that ends by writing the file path: checks its name (dg_file_name_ok), makes
 * its folder (dg_mkdirs) and checks that the folder is writable (DG_ERR_IO naming it if not). */
DG_API dg_status dg_file_parent_make(const char *path, dg_err *e);
/* out = "dir/name" (dir NULL or "": name); an error, never a cut name, when it
 * does not fit in size bytes or its last component passes the system's NAME_MAX. */
DG_API dg_status dg_path_join(char *out, size_t size, const char *dir, const char *name, dg_err *e);
/* 1 when a and b name the same file: the same device and inode when both
 * exist, else the same absolute path once ".", ".." and "//" are resolved
 * (through the real path of the nearest existing folder); 0 otherwise. */
DG_API int       dg_path_same(const char *a, const char *b);
/* Makes dir (mkdir -p) and locks it for this process (flock on "<dir>/.lock",
 * exclusive, not waiting). Returns the lock's descriptor (>= 0), or -1 with
 * e set: DG_ERR_IO naming the folder when another run holds it. */
DG_API int       dg_dir_lock(const char *dir, dg_err *e);
/* Releases the lock of dg_dir_lock(dir) and removes "<dir>/.lock" (when it is still the file held):
 * a finished run leaves no lock file behind. lock < 0 is harmless. */
DG_API void      dg_dir_unlock(const char *dir, int lock);
/* Removes from dir (not its subfolders) the temporary files "<name>.tmp.<pid>" that dg_file_begin
 * left behind in a process that is gone (killed before its commit: kill(pid, 0) fails with ESRCH);
 * a live process's are kept, and so is every other file. Returns how many it removed, or -1 with
 * e set (DG_ERR_IO naming dir or the file). A process on another machine looks gone from here:
 * call it on a folder this process holds (dg_dir_lock), as a resumed run does. */
DG_API int       dg_dir_clean(const char *dir, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
