/* The file helpers every reader and writer goes through: regular files only
 * (a FIFO, a device or a folder refused without blocking), atomic writes that
 * refuse a target that is not a regular file or a name too long, path joining
 * that never cuts a name, path comparison, the run-folder lock, and the CSV
 * writer on top of the atomic writes. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "difgames/fileio.h"
#include "io/csv.h"
#include "util/tmpdir.h"

static char g_dir[64];

static int make_dir(void **state) {
    (void)state;
    return check_tmpdir(g_dir, "dg_fileio_");
}

static int remove_dir(void **state) {
    (void)state;
    return check_rmdir(g_dir);
}

static void in_dir(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", g_dir, name); }

/* Writes text into path. */
static void write_text(const char *path, const char *text) {
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* dg_file_read_all refuses path: returns its status, hands out nothing, and its message names
 * path and holds want. */
static dg_status read_all_refused(const char *path, const char *want) {
    dg_err e = {0};
    unsigned char *buf = (unsigned char *)"x";
    size_t len = 7;
    const dg_status st = dg_file_read_all(path, &buf, &len, &e);
    assert_int_not_equal(st, DG_OK);
    assert_null(buf);
    assert_int_equal(len, 0);
    if (!strstr(e.msg, want) || !strstr(e.msg, path)) fail_msg("'%s' lacks '%s'", e.msg, want);
    return st;
}

static void test_reads_refuse_non_regular(void **state) {
    (void)state;
    char fifo[128], reg[128];
    in_dir(fifo, sizeof fifo, "fifo");
    in_dir(reg, sizeof reg, "reg.txt");
    assert_int_equal(mkfifo(fifo, 0600), 0);  /* no writer: an open without O_NONBLOCK would hang */
    write_text(reg, "hello");
    static const struct { const char *path, *want; } CASES[] = {
        {NULL, "a FIFO"}, {"/dev/zero", "a character device"}, {"/tmp", "a folder"}, {"/nonexistent/x", "cannot open"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const char *path = CASES[i].path ? CASES[i].path : fifo;
        read_all_refused(path, CASES[i].want);
        dg_err e = {0};
        FILE *f2 = (FILE *)1;
        assert_int_not_equal(dg_file_open_read(path, &f2, NULL, &e), DG_OK);
        assert_null(f2);
    }
    unsigned char *buf;
    size_t len;
    dg_err e = {0};
    assert_int_equal(dg_file_read_all(reg, &buf, &len, &e), DG_OK);
    assert_int_equal(len, 5);
    assert_string_equal((char *)buf, "hello");
    free(buf);
}

static void test_writes_refuse_bad_targets(void **state) {
    (void)state;
    dg_file f;
    dg_err e = {0};
    /* a folder or a FIFO as the target: refused before the work */
    char fifo[128];
    in_dir(fifo, sizeof fifo, "wfifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_not_equal(dg_file_begin(&f, g_dir, &e), DG_OK);
    assert_non_null(strstr(e.msg, "a folder"));
    assert_int_not_equal(dg_file_begin(&f, fifo, &e), DG_OK);
    assert_non_null(strstr(e.msg, "a FIFO"));
    /* a name whose temporary name would pass NAME_MAX; a path past DG_PATH_MAX */
    char name[300], path[512];
    memset(name, 'a', 250);
    name[250] = 0;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    assert_int_not_equal(dg_file_begin(&f, path, &e), DG_OK);
    assert_non_null(strstr(e.msg, "file name too long"));
    char *longp = malloc(DG_PATH_MAX + 100);
    assert_non_null(longp);
    memset(longp, 'b', DG_PATH_MAX + 99);
    for (int i = 100; i < DG_PATH_MAX + 99; i += 100) longp[i] = '/';
    longp[DG_PATH_MAX + 99] = 0;
    assert_int_not_equal(dg_file_begin(&f, longp, &e), DG_OK);
    assert_non_null(strstr(e.msg, "path too long"));
    assert_int_not_equal(dg_mkdirs(longp, &e), DG_OK);
    assert_non_null(strstr(e.msg, "path too long"));
    free(longp);
    /* a good one still works, and leaves no temporary file */
    char good[128];
    in_dir(good, sizeof good, "good.txt");
    assert_int_equal(dg_file_begin(&f, good, &e), DG_OK);
    fputs("ok", f.fp);
    assert_int_equal(dg_file_commit(&f, &e), DG_OK);
    struct stat sb;
    assert_int_equal(stat(good, &sb), 0);
    assert_int_equal(sb.st_size, 2);
}

static void test_path_join(void **state) {
    (void)state;
    char out[24];
    dg_err e = {0};
    assert_int_equal(dg_path_join(out, sizeof out, "runs/reach", "final.safetensors", &e), DG_ERR_ARG);
    assert_string_equal(out, "");  /* never a cut name */
    assert_non_null(strstr(e.msg, "path too long"));
    assert_int_equal(dg_path_join(out, sizeof out, "runs", "a.csv", &e), DG_OK);
    assert_string_equal(out, "runs/a.csv");
    assert_int_equal(dg_path_join(out, sizeof out, NULL, "a.csv", &e), DG_OK);
    assert_string_equal(out, "a.csv");
    char big[600], name[300];
    memset(name, 'n', 256);
    name[256] = 0;
    assert_int_equal(dg_path_join(big, sizeof big, "d", name, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "file name too long"));
}

static void test_path_same(void **state) {
    (void)state;
    char a[128], b[256];
    in_dir(a, sizeof a, "same.txt");
    write_text(a, "");
    snprintf(b, sizeof b, "%s/./sub/../same.txt", g_dir);
    assert_true(dg_path_same(a, b));  /* exists: by device and inode (sub does not exist: stat fails) */
    snprintf(b, sizeof b, "%s//same.txt", g_dir);
    assert_true(dg_path_same(a, b));
    char l[128];
    in_dir(l, sizeof l, "link.txt");
    assert_int_equal(symlink(a, l), 0);
    assert_true(dg_path_same(a, l));
    /* neither exists: by the normalised path */
    in_dir(a, sizeof a, "new/x.csv");
    snprintf(b, sizeof b, "%s/new/../new/./x.csv", g_dir);
    assert_true(dg_path_same(a, b));
    in_dir(b, sizeof b, "new/y.csv");
    assert_false(dg_path_same(a, b));
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(g_dir), 0);
    assert_true(dg_path_same("new/x.csv", a));  /* relative against absolute */
    assert_true(dg_path_same("same.txt", "./same.txt"));
    assert_false(dg_path_same("same.txt", "new/x.csv"));
    assert_int_equal(chdir(cwd), 0);
}

/* Checks that path still holds text. */
static void still_holds(const char *path, const char *text) {
    char buf[64] = {0};
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    const size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    assert_string_equal(buf, text);
}

/* one holder per folder; .lock there while held, gone once released; a dead run's .lock taken over */
static void test_dir_lock(void **state) {
    (void)state;
    char run[128];
    in_dir(run, sizeof run, "runs/a");
    dg_err e = {0};
    const int l1 = dg_dir_lock(run, &e);  /* makes the folder */
    assert_true(l1 >= 0);
    const int l2 = dg_dir_lock(run, &e);  /* a second holder: refused, naming the folder */
    assert_int_equal(l2, -1);
    assert_int_equal(e.status, DG_ERR_IO);
    assert_non_null(strstr(e.msg, run));
    assert_non_null(strstr(e.msg, "another run is writing into this folder"));
    char other[128];
    in_dir(other, sizeof other, "runs/b");
    const int l3 = dg_dir_lock(other, &e);  /* another folder is free */
    assert_true(l3 >= 0);
    char lock[160];
    snprintf(lock, sizeof lock, "%s/.lock", run);
    assert_int_equal(access(lock, F_OK), 0);  /* there while held */
    dg_dir_unlock(run, l1);
    assert_int_not_equal(access(lock, F_OK), 0);  /* a finished run leaves no .lock */
    const int l4 = dg_dir_lock(run, &e);  /* free again once released */
    assert_true(l4 >= 0);
    dg_dir_unlock(other, l3);
    dg_dir_unlock(run, l4);
    dg_dir_unlock(run, -1);  /* harmless */
    dg_dir_unlock(NULL, -1);
    assert_int_equal(dg_dir_lock("/proc/dg_no/x", &e), -1);
    /* the .lock of a run that died (no process holds it) is taken over, and removed at the end */
    write_text(lock, "99999999\n");
    const int l5 = dg_dir_lock(run, &e);
    assert_true(l5 >= 0);
    char me[32];
    snprintf(me, sizeof me, "%ld\n", (long)getpid());
    still_holds(lock, me);  /* now this process's pid */
    dg_dir_unlock(run, l5);
    assert_int_not_equal(access(lock, F_OK), 0);
    /* a .lock put in place of the one held (removed by hand, then another run's) is not removed */
    const int l6 = dg_dir_lock(run, &e);
    assert_true(l6 >= 0);
    assert_int_equal(unlink(lock), 0);
    write_text(lock, "other\n");
    dg_dir_unlock(run, l6);
    still_holds(lock, "other\n");
}

/* a .lock that is a symbolic link or a hard link is refused, and the file it points to is untouched */
static void test_dir_lock_links(void **state) {
    (void)state;
    char run[128], lock[160], victim[128];
    in_dir(victim, sizeof victim, "victim.txt");
    write_text(victim, "precious");
    in_dir(run, sizeof run, "runs/sym");
    dg_err e = {0};
    assert_int_equal(dg_mkdirs(run, &e), DG_OK);
    snprintf(lock, sizeof lock, "%s/.lock", run);
    assert_int_equal(symlink(victim, lock), 0);
    assert_int_equal(dg_dir_lock(run, &e), -1);
    assert_int_equal(e.status, DG_ERR_IO);
    if (!strstr(e.msg, "its lock file .lock is a symbolic link") || !strstr(e.msg, run)) fail_msg("%s", e.msg);
    still_holds(victim, "precious");
    in_dir(run, sizeof run, "runs/dangling");  /* a link to nothing: not made either */
    assert_int_equal(dg_mkdirs(run, &e), DG_OK);
    snprintf(lock, sizeof lock, "%s/.lock", run);
    char ghost[128];
    in_dir(ghost, sizeof ghost, "ghost.txt");
    assert_int_equal(symlink(ghost, lock), 0);
    assert_int_equal(dg_dir_lock(run, &e), -1);
    assert_non_null(strstr(e.msg, "is a symbolic link"));
    assert_int_not_equal(access(ghost, F_OK), 0);
    in_dir(run, sizeof run, "runs/hard");
    assert_int_equal(dg_mkdirs(run, &e), DG_OK);
    snprintf(lock, sizeof lock, "%s/.lock", run);
    assert_int_equal(link(victim, lock), 0);
    assert_int_equal(dg_dir_lock(run, &e), -1);
    if (!strstr(e.msg, "its lock file .lock has 2 names")) fail_msg("%s", e.msg);
    still_holds(victim, "precious");
}

/* a link planted at the temporary name "<path>.tmp.<pid>" (symbolic or hard) or at the final name
 * is never written through: the file it points to keeps its bytes, path gets the new ones */
static void test_file_begin_links(void **state) {
    (void)state;
    char victim[128], path[128], tmp[192];
    in_dir(victim, sizeof victim, "victim2.txt");
    in_dir(path, sizeof path, "out.txt");
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    for (int how = 0; how < 3; how++) {
        write_text(victim, "precious");
        unlink(path);
        if (how == 0) assert_int_equal(symlink(victim, tmp), 0);   /* the temporary, a symbolic link */
        if (how == 1) assert_int_equal(link(victim, tmp), 0);      /* the temporary, a hard link     */
        if (how == 2) assert_int_equal(symlink(victim, path), 0);  /* the final name, a symbolic link */
        dg_file f;
        dg_err e = {0};
        assert_int_equal(dg_file_begin(&f, path, &e), DG_OK);
        fputs("new", f.fp);
        assert_int_equal(dg_file_commit(&f, &e), DG_OK);
        still_holds(victim, "precious");
        still_holds(path, "new");
        struct stat sb;
        assert_int_equal(lstat(path, &sb), 0);
        assert_true(S_ISREG(sb.st_mode));
        assert_int_not_equal(lstat(tmp, &sb), 0);  /* nothing left at the temporary name */
    }
}

/* dg_dir_clean removes the temporaries "<name>.tmp.<pid>" of processes that are gone and keeps
 * those of a live process and every other file */
static void test_dir_clean(void **state) {
    (void)state;
    char dir[128], p[256];
    in_dir(dir, sizeof dir, "runs/clean");
    dg_err e = {0};
    assert_int_equal(dg_mkdirs(dir, &e), DG_OK);
    const pid_t dead = fork();  /* a process that ended: its pid names no process (ESRCH) */
    assert_true(dead >= 0);
    if (dead == 0) _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    const long pids[] = {-1, (long)dead, (long)getpid(), -1, -1};  /* -1: the name as it is */
    const char *const names[] = {"metrics.csv", "metrics.csv.tmp.", "final.safetensors.tmp.", "x.tmp.abc", "x.tmp."};
    for (int i = 0; i < 5; i++) {
        if (pids[i] < 0) snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        else snprintf(p, sizeof p, "%s/%s%ld", dir, names[i], pids[i]);
        write_text(p, "t");
    }
    snprintf(p, sizeof p, "%s/sub.tmp.%ld", dir, (long)dead);  /* a folder of that name: not a temporary */
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(dg_dir_clean(dir, &e), 1);
    snprintf(p, sizeof p, "%s/metrics.csv.tmp.%ld", dir, (long)dead);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/final.safetensors.tmp.%ld", dir, (long)getpid());
    assert_int_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/metrics.csv", dir);
    assert_int_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/x.tmp.abc", dir);
    assert_int_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/x.tmp.", dir);
    assert_int_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/sub.tmp.%ld", dir, (long)dead);
    assert_int_equal(access(p, F_OK), 0);
    assert_int_equal(dg_dir_clean(dir, &e), 0);  /* nothing more to remove */
    in_dir(p, sizeof p, "runs/none");           /* a folder that does not exist: one line naming it */
    assert_int_equal(dg_dir_clean(p, &e), -1);
    if (!strstr(e.msg, "runs/none")) fail_msg("%s", e.msg);
}

/* reads bounded by memory and by a cap, refused from the size alone (a sparse file is never read) */
static void test_read_bounds(void **state) {
    (void)state;
    char big[128], cfg[128];
    in_dir(big, sizeof big, "huge.bin");
    write_text(big, "");
    if (truncate(big, (off_t)1 << 40) != 0)  /* 1 TiB of holes: more than any machine's memory */
        printf("  skip: no 1 TiB sparse file here\n");
    else
        assert_int_equal(read_all_refused(big, "too large to load"), DG_ERR_ARG);
    in_dir(cfg, sizeof cfg, "c.yaml");
    write_text(cfg, "game: reach\n");
    dg_err e = {0};
    unsigned char *buf = NULL;
    size_t len = 0;
    assert_int_equal(dg_file_read_max(cfg, 12, &buf, &len, &e), DG_OK);  /* exactly the cap */
    assert_int_equal(len, 12);
    free(buf);
    assert_int_equal(dg_file_read_max(cfg, 11, &buf, &len, &e), DG_ERR_ARG);
    assert_null(buf);
    if (!strstr(e.msg, cfg) || !strstr(e.msg, "more than the")) fail_msg("%s", e.msg);
}

/* the names dg_file_begin accepts are checked up front by dg_file_name_ok */
static void test_file_name_ok(void **state) {
    (void)state;
    char name[400], path[5000];
    dg_err e = {0};
    assert_int_equal(dg_file_name_ok("runs/x/out.gif", &e), DG_OK);
    assert_int_equal(dg_file_name_ok("", &e), DG_ERR_ARG);
    assert_int_equal(dg_file_name_ok(NULL, &e), DG_ERR_ARG);
    memset(name, 'n', 250);  /* within NAME_MAX, but not with ".tmp.<pid>" added */
    name[250] = 0;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    assert_int_equal(dg_file_name_ok(path, &e), DG_ERR_ARG);
    if (!strstr(e.msg, "file name too long (250 characters")) fail_msg("%s", e.msg);
    dg_file f;
    assert_int_equal(dg_file_begin(&f, path, &e), DG_ERR_ARG);  /* the same rule */
    name[200] = 0;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    assert_int_equal(dg_file_name_ok(path, &e), DG_OK);
    memset(name, 'd', 300);  /* a folder name past NAME_MAX */
    name[300] = 0;
    snprintf(path, sizeof path, "%s/%s/x.gif", g_dir, name);
    assert_int_equal(dg_file_name_ok(path, &e), DG_ERR_ARG);
    if (!strstr(e.msg, "folder name too long (300 characters")) fail_msg("%s", e.msg);
    memset(path, 'a', 4090);  /* a path past DG_PATH_MAX once ".tmp.<pid>" is added */
    for (int i = 100; i < 4090; i += 100) path[i] = '/';
    path[4090] = 0;
    assert_int_equal(dg_file_name_ok(path, &e), DG_ERR_ARG);
    if (!strstr(e.msg, "path too long")) fail_msg("%s", e.msg);
}

/* Starts a CSV table named name in the folder "<g_dir>/csv" (made if needed); path gets its path. */
static void csv_begin(dg_csv *w, char *path, size_t n, const char *name) {
    dg_err e = {0};
    snprintf(path, n, "%s/csv", g_dir);
    mkdir(path, 0700);
    snprintf(path, n, "%s/csv/%s", g_dir, name);
    assert_int_equal(dg_csv_begin(w, path, &e), DG_OK);
}

/* Asserts that path holds exactly want, then removes it. */
static void assert_file_is(const char *path, const char *want) {
    unsigned char *buf = NULL;
    size_t len = 0;
    dg_err e = {0};
    assert_int_equal(dg_file_read_all(path, &buf, &len, &e), DG_OK);
    assert_string_equal((const char *)buf, want);
    assert_int_equal(len, strlen(want));
    free(buf);
    remove(path);
}

/* Each column formats its cells the one way it declared; rows end at their last column; text
 * with a comma or a quote is quoted; a table without rows is its header. */
static void test_csv_formats(void **state) {
    (void)state;
    char path[256];
    dg_err e = {0};
    dg_csv w;
    csv_begin(&w, path, sizeof path, "t.csv");
    dg_csv_col(&w, "name", DG_CSV_STR);
    dg_csv_col(&w, "n", DG_CSV_INT);
    dg_csv_cols(&w, NULL, "x", 2, DG_CSV_G9);
    dg_csv_cols(&w, (const char *const[]){"rate", "unused"}, NULL, 1, DG_CSV_G6);
    dg_csv_col(&w, "ms", DG_CSV_F3);
    const double row1[] = {3840, 1.0f / 3.0f, -2.5e-7, 1.0 / 3.0, 12.3456};
    const double row2[] = {1e15, NAN, INFINITY, 1234567.0, 0.0005};
    dg_csv_str(&w, "bptt");
    for (int i = 0; i < 5; i++) dg_csv_num(&w, row1[i]);
    dg_csv_str(&w, "a,b \"q\"");
    for (int i = 0; i < 5; i++) dg_csv_num(&w, row2[i]);
    assert_int_equal(dg_csv_commit(&w, &e), DG_OK);
    assert_file_is(path, "name,n,x0,x1,rate,ms\n"
                         "bptt,3840,0.333333343,-2.5e-07,0.333333,12.346\n"
                         "\"a,b \"\"q\"\"\",1000000000000000,nan,inf,1.23457e+06,0.001\n");
    csv_begin(&w, path, sizeof path, "h.csv");
    dg_csv_cols(&w, (const char *const[]){"t", "a,b"}, NULL, 2, DG_CSV_G6);
    assert_int_equal(dg_csv_commit(&w, &e), DG_OK);
    assert_file_is(path, "t,\"a,b\"\n");
}

/* A line dg_csv_str wrote reads back cell by cell: quoted cells lose their quotes, keep their
 * commas, their doubled quotes are one; a quote left open or text after a closing one is refused. */
static void test_csv_split(void **state) {
    (void)state;
    char line[] = "\"[16,16]\",5,,\"a \"\"q\"\", b\",x\r\n", *cell[8];
    assert_int_equal(dg_csv_split(line, cell, 8), 5);
    const char *want[5] = {"[16,16]", "5", "", "a \"q\", b", "x"};
    for (int i = 0; i < 5; i++) assert_string_equal(cell[i], want[i]);
    char few[] = "a,b,c";
    assert_int_equal(dg_csv_split(few, cell, 2), 2);  /* at most max */
    assert_string_equal(cell[1], "b");
    char empty[] = "\n";
    assert_int_equal(dg_csv_split(empty, cell, 8), 1);
    assert_string_equal(cell[0], "");
    char open[] = "\"[16,16],5", after[] = "\"a\"b,c";
    assert_int_equal(dg_csv_split(open, cell, 8), -1);
    assert_int_equal(dg_csv_split(after, cell, 8), -1);
}

/* A caller's mistake is reported by commit, which then writes nothing; abort leaves nothing. */
static void test_csv_mistakes_leave_nothing(void **state) {
    (void)state;
    char path[256], cmd[320];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s/csv')\"", g_dir);
    for (int k = 0; k < 6; k++) {
        dg_err e = {0};
        dg_csv w;
        csv_begin(&w, path, sizeof path, "bad.csv");
        if (k < 4) dg_csv_col(&w, "x", DG_CSV_G9);
        if (k < 4) dg_csv_col(&w, "s", DG_CSV_STR);
        if (k == 0) dg_csv_num(&w, 1);                   /* a row left unfinished */
        if (k == 1) dg_csv_str(&w, "text");              /* text in a numeric column */
        if (k == 2) { dg_csv_num(&w, 1); dg_csv_num(&w, 2); }  /* a number in a text column */
        if (k == 3) { dg_csv_num(&w, 1); dg_csv_str(&w, "a"); dg_csv_col(&w, "late", DG_CSV_G6); }
        if (k == 4) dg_csv_num(&w, 1);                   /* a row before any column */
        if (k == 5) {                                    /* the caller gives up */
            dg_csv_col(&w, "x", DG_CSV_G9);
            dg_csv_num(&w, 1);
            dg_csv_abort(&w);
        } else {
            assert_int_equal(dg_csv_commit(&w, &e), DG_ERR_ARG);
            if (!strstr(e.msg, "bad.csv: CSV not written")) fail_msg("%s", e.msg);
        }
        assert_int_equal(system(cmd), 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_refuse_non_regular),
        cmocka_unit_test(test_writes_refuse_bad_targets),
        cmocka_unit_test(test_path_join),
        cmocka_unit_test(test_path_same),
        cmocka_unit_test(test_dir_lock),
        cmocka_unit_test(test_dir_lock_links),
        cmocka_unit_test(test_file_begin_links),
        cmocka_unit_test(test_dir_clean),
        cmocka_unit_test(test_read_bounds),
        cmocka_unit_test(test_file_name_ok),
        cmocka_unit_test(test_csv_formats),
        cmocka_unit_test(test_csv_split),
        cmocka_unit_test(test_csv_mistakes_leave_nothing),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
