/* Tests for safetensors read/write: a bit-exact round trip of every dtype,
 * the reference format's bytes, reads converting between F32 and F64, rejection of malformed files (each with the
 * message it should give), a mutation fuzz that must never crash, and
 * atomic writes that leave nothing behind on failure. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "difgames/fileio.h"
#include "difgames/safetensors.h"

/* ------------------------------------------------------------ helpers */

static char g_dir[512];  /* a fresh temporary folder for the whole run */

static void path_in(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", g_dir, name);
}

static int setup_dir(void **state) {
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/dg_st_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown_dir(void **state) {
    (void)state;
    DIR *d = opendir(g_dir);
    if (!d) return -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char p[1024];
        path_in(p, sizeof p, de->d_name);
        if (unlink(p) != 0) rmdir(p);
    }
    closedir(d);
    return rmdir(g_dir);
}

/* Number of entries in g_dir (to see that failed writes leave no temp file). */
static int dir_entries(void) {
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *buf, size_t len) {
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* A file image: little-endian length of hdr, hdr, data_len patterned bytes. */
static unsigned char *mkbuf(const char *hdr, size_t data_len, size_t *len) {
    size_t n = strlen(hdr);
    *len = 8 + n + data_len;
    unsigned char *b = malloc(*len);
    assert_non_null(b);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(b + 8, hdr, n);
    for (size_t i = 0; i < data_len; i++) b[8 + n + i] = (unsigned char)(i * 7 + 1);
    return b;
}

static void expect_err(const dg_err *e, dg_status st, const char *sub) {
    if (getenv("DG_TEST_VERBOSE")) print_message("    [%s] %s\n", dg_status_str(e->status), e->msg);
    if (e->status != st || !strstr(e->msg, sub)) {
        print_error("got [%s] \"%s\"\nwanted [%s] containing \"%s\"\n", dg_status_str(e->status),
                    e->msg, dg_status_str(st), sub);
        fail();
    }
}

/* Parsing hdr + data_len bytes must fail with DG_ERR_FORMAT and a message holding sub. */
static void expect_reject(const char *hdr, size_t data_len, const char *sub) {
    size_t len;
    unsigned char *b = mkbuf(hdr, data_len, &len);
    dg_err e = {0};
    dg_st_file *f = dg_st_parse(b, len, "bad.safetensors", &e);
    if (f) print_error("accepted: %s\n", hdr);
    assert_null(f);
    expect_err(&e, DG_ERR_FORMAT, sub);
    assert_non_null(strstr(e.msg, "bad.safetensors: "));
    free(b);
}

static dg_st_file *expect_accept(const char *hdr, size_t data_len) {
    size_t len;
    unsigned char *b = mkbuf(hdr, data_len, &len);
    dg_err e = {0};
    dg_st_file *f = dg_st_parse(b, len, "ok.safetensors", &e);
    if (!f) print_error("rejected: %s\n  %s\n", hdr, e.msg);
    assert_non_null(f);
    free(b);
    return f;
}

/* A valid two-tensor file image for truncation and fuzz tests. */
static unsigned char *small_file(size_t *len) {
    return mkbuf("{\"__metadata__\":{\"k\":\"v\"},"
                 "\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                 "\"b\":{\"dtype\":\"I16\",\"shape\":[3],\"data_offsets\":[16,22]}}  ",
                 22, len);
}

/* -------------------------------------------------------------- tests */

static void test_dtype_table(void **state) {
    (void)state;
    static const char *names[] = {"F64", "F32", "F16", "BF16", "I64", "I32", "I16",
                                  "I8",  "U8",  "BOOL", "U16", "U32", "U64"};
    static const size_t sizes[] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 1, 2, 4, 8};
    assert_int_equal(DG_DTYPE_COUNT, 13);
    for (int i = 0; i < 13; i++) {
        int t = dg_dtype_from_name(names[i]);
        assert_true(t >= 0);
        assert_string_equal(dg_dtype_name((dg_dtype)t), names[i]);
        assert_int_equal(dg_dtype_size((dg_dtype)t), sizes[i]);
    }
    assert_int_equal(dg_dtype_from_name("f32"), -1);
    assert_int_equal(dg_dtype_from_name("F8_E4M3"), -1);
    assert_int_equal(dg_dtype_from_name(NULL), -1);
    assert_string_equal(dg_dtype_name(DG_DTYPE_COUNT), "?");
    assert_int_equal(dg_dtype_size(DG_DTYPE_COUNT), 0);
}

static void test_null_safe(void **state) {
    (void)state;
    dg_st_free(NULL);
    dg_st_writer_free(NULL);
    assert_int_equal(dg_st_count(NULL), 0);
    assert_null(dg_st_get(NULL, 0));
    assert_null(dg_st_find(NULL, "a"));
    assert_null(dg_st_meta(NULL, "a"));
    assert_int_equal(dg_st_meta_count(NULL), 0);
    dg_err e = {0};
    assert_null(dg_st_parse(NULL, 0, NULL, &e));
    expect_err(&e, DG_ERR_FORMAT, "<memory>: file is 0 bytes");
    assert_null(dg_st_parse(NULL, 0, NULL, NULL));  /* no dg_err: still no crash */
    char p[1024];
    path_in(p, sizeof p, "missing.safetensors");
    assert_null(dg_st_load(p, &e));
    expect_err(&e, DG_ERR_IO, "missing.safetensors");
}

static void test_round_trip(void **state) {
    (void)state;
    /* Floats whose bits must survive: NaN with payload, -0, inf, a denormal. */
    uint32_t w1_bits[6] = {0x7fc01234u, 0x80000000u, 0x7f800000u, 0x00000001u, 0x3fc00000u, 0xc0000000u};
    float w1[6];
    memcpy(w1, w1_bits, sizeof w1);
    double b[4] = {1.0 / 3.0, -1e300, 5e-324, -0.0};
    int64_t step = -42;
    uint8_t mask[4] = {1, 0, 0, 1};
    uint16_t h[3] = {0x3c00, 0xfc00, 0x7e01};
    uint16_t bf[2] = {0x3f80, 0xff81};
    int32_t i32[2] = {INT32_MIN, INT32_MAX};
    int16_t i16[3] = {-1, 2, INT16_MIN};
    int8_t i8[5] = {-128, -1, 0, 1, 127};
    uint16_t u16[2] = {0xffff, 1};
    uint32_t u32[1] = {0xdeadbeefu};
    uint64_t u64[2] = {UINT64_MAX, 0x0102030405060708ull};
    float deep[2] = {1.25f, -2.5f};
    const char *odd = "layer.0/w \"q\"\\\n\t\xc3\xa9";  /* quotes, backslash, controls, é */

    struct {
        const char *name; dg_dtype dt; int nd; int64_t shape[8]; const void *data;
    } T[] = {
        {"w1", DG_DTYPE_F32, 2, {2, 3}, w1},
        {"b", DG_DTYPE_F64, 1, {4}, b},
        {"step", DG_DTYPE_I64, 0, {0}, &step},
        {"mask", DG_DTYPE_BOOL, 2, {2, 2}, mask},
        {"h", DG_DTYPE_F16, 1, {3}, h},
        {"bf", DG_DTYPE_BF16, 3, {1, 1, 2}, bf},
        {"i32", DG_DTYPE_I32, 1, {2}, i32},
        {"i16", DG_DTYPE_I16, 1, {3}, i16},
        {"i8", DG_DTYPE_I8, 1, {5}, i8},
        {"empty", DG_DTYPE_U8, 2, {0, 5}, NULL},
        {"u16", DG_DTYPE_U16, 1, {2}, u16},
        {"u32", DG_DTYPE_U32, 1, {1}, u32},
        {"u64", DG_DTYPE_U64, 1, {2}, u64},
        {"deep", DG_DTYPE_F32, 8, {1, 1, 1, 1, 1, 1, 2, 1}, deep},
        {odd, DG_DTYPE_F32, 1, {1}, deep},
    };
    const int n = (int)(sizeof T / sizeof T[0]);

    dg_err e = {0};
    dg_st_writer *w = dg_st_writer_create();
    assert_non_null(w);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        assert_int_equal(dg_st_writer_add(w, T[i].name, T[i].dt, T[i].nd, T[i].shape, T[i].data, &e), DG_OK);
        size_t numel = 1;
        for (int k = 0; k < T[i].nd; k++) numel *= (size_t)T[i].shape[k];
        total += numel * dg_dtype_size(T[i].dt);
    }
    assert_int_equal(dg_st_writer_meta(w, "epoch", "7", &e), DG_OK);
    assert_int_equal(dg_st_writer_meta(w, "game", "chase", &e), DG_OK);
    assert_int_equal(dg_st_writer_meta(w, "note", "say \"hi\"\n\xe2\x82\xac", &e), DG_OK);
    assert_int_equal(dg_st_writer_meta(w, "epoch", "120", &e), DG_OK);  /* replaces 7 */

    /* The writer copied the data: scribbling on the source changes nothing. */
    float w1_saved[6];
    memcpy(w1_saved, w1, sizeof w1);
    w1[0] = 99.0f;

    char p[1024];
    path_in(p, sizeof p, "rt.safetensors");
    assert_int_equal(dg_st_writer_write(w, p, &e), DG_OK);
    assert_int_equal(dg_st_writer_write(w, p, &e), DG_OK);  /* overwrite in place works */
    dg_st_writer_free(w);
    memcpy(w1, w1_saved, sizeof w1);
    assert_int_equal(dir_entries(), 1);  /* no temporary file left over */

    /* Layout: length, '{', space padding to a multiple of 8, contiguous data. */
    unsigned char *raw;
    size_t rawlen;
    assert_int_equal(dg_file_read_all(p, &raw, &rawlen, &e), DG_OK);
    uint64_t hn = 0;
    for (int i = 7; i >= 0; i--) hn = (hn << 8) | raw[i];
    assert_int_equal((8 + hn) % 8, 0);
    assert_int_equal(raw[8], '{');
    size_t close = 8 + (size_t)hn - 1;
    while (raw[close] == ' ') close--;
    assert_int_equal(raw[close], '}');
    assert_int_equal(rawlen, 8 + hn + total);
    assert_memory_equal(raw + 8 + hn, w1, sizeof w1);  /* first tensor first (x86: LE) */
    free(raw);

    dg_st_file *f = dg_st_load(p, &e);
    assert_non_null(f);
    assert_int_equal(dg_st_count(f), n);
    for (int i = 0; i < n; i++) {
        const dg_st_tensor *t = dg_st_get(f, i);
        assert_non_null(t);
        assert_string_equal(t->name, T[i].name);  /* header order is add order */
        assert_ptr_equal(dg_st_find(f, T[i].name), t);
        assert_int_equal(t->dtype, T[i].dt);
        assert_int_equal(t->ndim, T[i].nd);
        size_t numel = 1;
        for (int k = 0; k < T[i].nd; k++) {
            assert_int_equal(t->shape[k], T[i].shape[k]);
            numel *= (size_t)T[i].shape[k];
        }
        assert_int_equal(t->numel, numel);
        assert_int_equal(t->nbytes, numel * dg_dtype_size(T[i].dt));
        unsigned char out[64];
        memset(out, 0xAB, sizeof out);
        assert_true(t->nbytes <= sizeof out);
        assert_int_equal(dg_st_read(f, T[i].name, T[i].dt, T[i].nd, T[i].shape, out, &e), DG_OK);
        if (t->nbytes) assert_memory_equal(out, T[i].data, t->nbytes);
    }
    assert_null(dg_st_get(f, n));
    assert_null(dg_st_get(f, -1));
    assert_null(dg_st_find(f, "nope"));

    float got[6];
    assert_int_equal(dg_st_read_f32(f, "w1", 2, (int64_t[]){2, 3}, got, &e), DG_OK);
    assert_memory_equal(got, w1_bits, sizeof got);  /* bit-exact, NaN payload included */
    int64_t scalar;
    assert_int_equal(dg_st_read(f, "step", DG_DTYPE_I64, 0, NULL, &scalar, &e), DG_OK);
    assert_int_equal(scalar, -42);

    assert_int_equal(dg_st_meta_count(f), 3);
    assert_string_equal(dg_st_meta_key(f, 0), "epoch");
    assert_string_equal(dg_st_meta(f, "epoch"), "120");
    assert_string_equal(dg_st_meta(f, "game"), "chase");
    assert_string_equal(dg_st_meta(f, "note"), "say \"hi\"\n\xe2\x82\xac");
    assert_null(dg_st_meta(f, "missing"));
    assert_null(dg_st_meta_key(f, 3));
    dg_st_free(f);
}

static void test_read_errors(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = small_file(&len);
    dg_err e = {0};
    dg_st_file *f = dg_st_parse(b, len, "snap.safetensors", &e);
    free(b);  /* parse copied it */
    assert_non_null(f);
    float out[4] = {0};
    assert_int_equal(dg_st_read_f32(f, "a", 2, (int64_t[]){4, 1}, out, &e), DG_ERR_SHAPE);
    expect_err(&e, DG_ERR_SHAPE, "snap.safetensors: tensor 'a': expected shape [4, 1], found [2, 2]");
    assert_int_equal(dg_st_read_f32(f, "a", 1, (int64_t[]){4}, out, &e), DG_ERR_SHAPE);
    expect_err(&e, DG_ERR_SHAPE, "expected shape [4], found [2, 2]");
    assert_int_equal(dg_st_read_f32(f, "b", 1, (int64_t[]){3}, out, &e), DG_ERR_FORMAT);
    expect_err(&e, DG_ERR_FORMAT, "snap.safetensors: tensor 'b': expected dtype F32, found I16");
    assert_int_equal(dg_st_read_f32(f, "zz", 1, (int64_t[]){3}, out, &e), DG_ERR_NOT_FOUND);
    expect_err(&e, DG_ERR_NOT_FOUND, "snap.safetensors: no tensor 'zz'");
    assert_int_equal(dg_st_read_f32(f, "a", 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, out, &e), DG_ERR_ARG);
    for (int i = 0; i < 4; i++) assert_true(out[i] == 0.0f);  /* untouched on error */
    assert_int_equal(dg_st_read_f32(f, "a", 2, (int64_t[]){2, 2}, out, &e), DG_OK);
    assert_string_equal(dg_st_meta(f, "k"), "v");
    dg_st_free(f);
}

/* dg_st_read_as: F32 into double exactly, F64 into float rounded, each width into itself as
 * dg_st_read; another dtype, shape or name: dg_st_read's errors, out untouched. */
static void test_read_as(void **state) {
    (void)state;
    char p[600];
    path_in(p, sizeof p, "as.safetensors");
    const float f[3] = {0.1f, -2.5f, 3e38f};
    const double d[3] = {0.1, -1e-300, 1e300};
    const int16_t i16[3] = {1, 2, 3};
    dg_err e = {0};
    dg_st_writer *w = dg_st_writer_create();
    assert_non_null(w);
    assert_int_equal(dg_st_writer_add(w, "f", DG_DTYPE_F32, 1, (int64_t[]){3}, f, &e), DG_OK);
    assert_int_equal(dg_st_writer_add(w, "d", DG_DTYPE_F64, 1, (int64_t[]){3}, d, &e), DG_OK);
    assert_int_equal(dg_st_writer_add(w, "i", DG_DTYPE_I16, 1, (int64_t[]){3}, i16, &e), DG_OK);
    assert_int_equal(dg_st_writer_write(w, p, &e), DG_OK);
    dg_st_writer_free(w);
    dg_st_file *s = dg_st_load(p, &e);
    assert_non_null(s);
    double od[3] = {0};
    float of[3] = {0};
    assert_int_equal(dg_st_read_as(s, "f", DG_DTYPE_F64, 1, (int64_t[]){3}, od, &e), DG_OK);
    for (int k = 0; k < 3; k++) assert_true(od[k] == (double)f[k]);
    assert_int_equal(dg_st_read_as(s, "d", DG_DTYPE_F64, 1, (int64_t[]){3}, od, &e), DG_OK);
    for (int k = 0; k < 3; k++) assert_true(od[k] == d[k]);
    assert_int_equal(dg_st_read_as(s, "d", DG_DTYPE_F32, 1, (int64_t[]){3}, of, &e), DG_OK);
    assert_true(of[0] == 0.1f && of[1] == (float)-1e-300 && isinf(of[2]));
    assert_int_equal(dg_st_read_as(s, "f", DG_DTYPE_F32, 1, (int64_t[]){3}, of, &e), DG_OK);
    for (int k = 0; k < 3; k++) assert_true(of[k] == f[k]);
    float keep[3] = {7, 7, 7};
    assert_int_equal(dg_st_read_as(s, "d", DG_DTYPE_F32, 1, (int64_t[]){4}, keep, &e), DG_ERR_SHAPE);
    expect_err(&e, DG_ERR_SHAPE, "tensor 'd': expected shape [4], found [3]");
    assert_int_equal(dg_st_read_as(s, "i", DG_DTYPE_F32, 1, (int64_t[]){3}, keep, &e), DG_ERR_FORMAT);
    expect_err(&e, DG_ERR_FORMAT, "tensor 'i': expected dtype F32, found I16");
    assert_int_equal(dg_st_read_as(s, "zz", DG_DTYPE_F64, 1, (int64_t[]){3}, od, &e), DG_ERR_NOT_FOUND);
    for (int k = 0; k < 3; k++) assert_true(keep[k] == 7.0f);
    dg_st_free(s);
    assert_int_equal(remove(p), 0);
}

/* Bytes from the reference implementation's own test (an unpadded header):
 * the reader must take them, and the writer must produce the padded form. */
static void test_reference_bytes(void **state) {
    (void)state;
    static const char hdr[] = "{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";
    unsigned char ref[8 + 60 + 16] = {'<'};
    assert_int_equal(strlen(hdr), 60);
    memcpy(ref + 8, hdr, 60);
    dg_err e = {0};
    dg_st_file *f = dg_st_parse(ref, sizeof ref, "ref", &e);
    assert_non_null(f);
    const dg_st_tensor *t = dg_st_find(f, "test");
    assert_non_null(t);
    assert_int_equal(t->dtype, DG_DTYPE_I32);
    assert_int_equal(t->nbytes, 16);
    dg_st_free(f);

    dg_st_writer *w = dg_st_writer_create();
    int32_t z[4] = {0};
    assert_int_equal(dg_st_writer_add(w, "test", DG_DTYPE_I32, 2, (int64_t[]){2, 2}, z, &e), DG_OK);
    char p[1024];
    path_in(p, sizeof p, "ref.safetensors");
    assert_int_equal(dg_st_writer_write(w, p, &e), DG_OK);
    dg_st_writer_free(w);
    unsigned char *raw;
    size_t rawlen;
    assert_int_equal(dg_file_read_all(p, &raw, &rawlen, &e), DG_OK);
    assert_int_equal(rawlen, 8 + 64 + 16);
    assert_int_equal(raw[0], 64);
    for (int i = 1; i < 8; i++) assert_int_equal(raw[i], 0);
    assert_memory_equal(raw + 8, hdr, 60);
    assert_memory_equal(raw + 68, "    ", 4);
    for (int i = 72; i < 88; i++) assert_int_equal(raw[i], 0);
    free(raw);
    remove(p);

    /* No tensors at all: "{}" and six spaces. */
    w = dg_st_writer_create();
    path_in(p, sizeof p, "empty.safetensors");
    assert_int_equal(dg_st_writer_write(w, p, &e), DG_OK);
    dg_st_writer_free(w);
    assert_int_equal(dg_file_read_all(p, &raw, &rawlen, &e), DG_OK);
    assert_int_equal(rawlen, 16);
    assert_memory_equal(raw + 8, "{}      ", 8);
    free(raw);
    f = dg_st_load(p, &e);
    assert_non_null(f);
    assert_int_equal(dg_st_count(f), 0);
    assert_int_equal(dg_st_meta_count(f), 0);
    dg_st_free(f);
    remove(p);
}

static void test_truncated(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = small_file(&len);
    dg_err e = {0};
    dg_st_file *f = dg_st_parse(b, len, "t", &e);
    assert_non_null(f);
    dg_st_free(f);
    /* Every proper prefix is rejected with a format error. */
    for (size_t cut = 0; cut < len; cut++) {
        memset(&e, 0, sizeof e);
        f = dg_st_parse(b, cut, "t", &e);
        if (f) print_error("prefix of %zu bytes accepted\n", cut);
        assert_null(f);
        assert_int_equal(e.status, DG_ERR_FORMAT);
    }
    /* A few cuts on disk, through dg_st_load, with their messages. */
    uint64_t hn = b[0];
    struct { size_t cut; const char *msg; } C[] = {
        {0, "file is 0 bytes, too short"},
        {5, "file is 5 bytes, too short"},
        {8, "runs past the end of the file (8 bytes)"},
        {8 + (size_t)hn / 2, "runs past the end of the file"},
        {8 + (size_t)hn, "tensor 'a': data_offsets [0,16] past the end of the data (0 bytes)"},
        {len - 1, "tensor 'b': data_offsets [16,22] past the end of the data (21 bytes)"},
    };
    char p[1024];
    path_in(p, sizeof p, "cut.safetensors");
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        write_bytes(p, b, C[i].cut);
        memset(&e, 0, sizeof e);
        assert_null(dg_st_load(p, &e));
        expect_err(&e, DG_ERR_FORMAT, C[i].msg);
        assert_non_null(strstr(e.msg, p));  /* names the file */
    }
    remove(p);
    free(b);
}

static void test_header_length(void **state) {
    (void)state;
    unsigned char b[64] = {0};
    memcpy(b + 8, "{}", 2);
    dg_err e = {0};
    assert_null(dg_st_parse(b, 16, "h", &e));
    expect_err(&e, DG_ERR_FORMAT, "h: header length is 0");
    b[7] = 0x80;  /* 2^63 */
    assert_null(dg_st_parse(b, 16, "h", &e));
    expect_err(&e, DG_ERR_FORMAT, "absurdly large");
    memset(b, 0, 8);
    b[0] = 0x01; b[1] = 0xe1; b[2] = 0xf5; b[3] = 0x05;  /* 100000001 */
    assert_null(dg_st_parse(b, 16, "h", &e));
    expect_err(&e, DG_ERR_FORMAT, "absurdly large");
    memset(b, 0, 8);
    b[0] = 9;  /* one byte more than there is */
    assert_null(dg_st_parse(b, 16, "h", &e));
    expect_err(&e, DG_ERR_FORMAT, "header length 9 runs past the end of the file (16 bytes)");
    b[0] = 8;
    memcpy(b + 8, "{}      ", 8);
    dg_st_file *f = dg_st_parse(b, 16, "h", &e);
    assert_non_null(f);
    dg_st_free(f);
}

#define TENSOR(name, dt, shape, offs) "\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"

static void test_malformed(void **state) {
    (void)state;
    struct { const char *hdr; size_t data; const char *msg; } R[] = {
        {"{" TENSOR("a", "F32", "[2]", "[0,8]") "," TENSOR("b", "F32", "[2]", "[4,12]") "}", 12,
         "tensors 'a' [0,8] and 'b' [4,12] overlap"},
        {"{" TENSOR("a", "F32", "[4]", "[0,16]") "," TENSOR("b", "F32", "[1]", "[8,12]") "}", 16,
         "tensors 'a' [0,16] and 'b' [8,12] overlap"},  /* b nested inside a */
        {"{" TENSOR("b", "F32", "[1]", "[12,16]") "," TENSOR("a", "F32", "[4]", "[0,16]") "}", 16,
         "overlap"},  /* header order differs from data order */
        {"{" TENSOR("a", "F32", "[2]", "[0,8]") "}", 4,
         "tensor 'a': data_offsets [0,8] past the end of the data (4 bytes)"},
        {"{" TENSOR("a", "F8_E4M3", "[2]", "[0,2]") "}", 2, "tensor 'a': unknown dtype 'F8_E4M3'"},
        {"{" TENSOR("a", "F32", "[3]", "[0,8]") "}", 8,
         "tensor 'a': data_offsets [0,8] hold 8 bytes but F32 shape [3] needs 12"},
        {"{" TENSOR("a", "F32", "[4294967296,4294967296,4294967296]", "[0,0]") "}", 0, "is too large"},
        {"{" TENSOR("a", "U8", "[9007199254740992,2048]", "[0,0]") "}", 0, "is too large"},  /* 2^64 */
        {"{" TENSOR("a", "F64", "[2305843009213693952]", "[0,0]") "}", 0, "larger than 2^53"},
        {"{\"a\":{\"dtype\":\"F32\",", 0, "not valid JSON"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1] \"data_offsets\":[0,4]}}", 4, "not valid JSON"},
        {"[1,2]", 0, "does not start with '{'"},
        {" {}", 0, "does not start with '{'"},
        {"{} x", 0, "bytes after the JSON object"},
        {"{}{}", 0, "bytes after the JSON object"},
        {"{" TENSOR("a", "F32", "[1]", "[0,4]") "," TENSOR("a", "F32", "[1]", "[4,8]") "}", 8,
         "tensor 'a': appears twice"},
        {"{\"a\":5}", 0, "tensor 'a': entry is not an object"},
        {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "tensor 'a': missing dtype"},
        {"{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "missing shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "missing data_offsets"},
        {"{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
         "field 'dtype' appears twice"},
        {"{" TENSOR("a", "F32", "[1]", "[0,4]") ",\"b\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[4,8]}}",
         8, "tensor 'b': dtype is not a string"},
        {"{" TENSOR("a", "F32", "[-1]", "[0,4]") "}", 4, "shape dim 0 is negative"},
        {"{" TENSOR("a", "F32", "[1,1.5]", "[0,4]") "}", 4, "shape dim 1 is not an integer"},
        {"{" TENSOR("a", "F32", "[\"2\"]", "[0,8]") "}", 8, "shape dim 0 is not a number"},
        {"{" TENSOR("a", "F32", "[1e400]", "[0,8]") "}", 8, "not a finite number"},
        {"{" TENSOR("a", "F32", "3", "[0,12]") "}", 12, "shape is not an array"},
        {"{" TENSOR("a", "F32", "[1,1,1,1,1,1,1,1,1]", "[0,4]") "}", 4, "shape has 9 dims (at most 8)"},
        {"{" TENSOR("a", "F32", "[1]", "[8,4]") "}", 8, "data_offsets [8,4] begin after end"},
        {"{" TENSOR("a", "F32", "[1]", "[0,4,8]") "}", 8, "not an array of two integers"},
        {"{" TENSOR("a", "F32", "[1]", "{}") "}", 8, "not an array of two integers"},
        {"{" TENSOR("a", "F32", "[0]", "[-4,0]") "}", 8, "data_offsets[0] is negative"},
        {"{" TENSOR("a", "F32", "[1]", "[0,4.5]") "}", 8, "data_offsets[1] is not an integer"},
        {"{" TENSOR("a", "F32", "[1]", "[0,18446744073709551620]") "}", 8, "larger than 2^53"},
        {"{\"__metadata__\":{\"k\":1}}", 0, "__metadata__: value of 'k' is not a string"},
        {"{\"__metadata__\":\"x\"}", 0, "__metadata__ is not an object"},
        {"{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, "__metadata__: key 'k' appears twice"},
        {"{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__ appears twice"},
        {"{" TENSOR("a\\u0000b", "F32", "[1]", "[0,4]") "}", 4, "escaped NUL"},
        {"{" TENSOR("a\xff", "F32", "[1]", "[0,4]") "}", 4, "not valid UTF-8 (byte 3 of the header)"},
        {"{" TENSOR("a\xc0\xaf", "F32", "[1]", "[0,4]") "}", 4, "not valid UTF-8"},  /* overlong '/' */
        {"{" TENSOR("a\xed\xa0\x80", "F32", "[1]", "[0,4]") "}", 4, "not valid UTF-8"},  /* surrogate */
        {"{" TENSOR("bad\\nname", "F32", "[1]", "[0,4]") "," TENSOR("x", "F32", "[1]", "[2,6]") "}", 8,
         "tensors 'bad?name' [0,4] and 'x' [2,6] overlap"},  /* control bytes shown as '?' */
    };
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) expect_reject(R[i].hdr, R[i].data, R[i].msg);

    /* A raw NUL inside the header is rejected before the JSON parser sees it. */
    size_t len;
    unsigned char *b = mkbuf("{\"a\":{}}", 0, &len);
    b[10] = 0;
    dg_err e = {0};
    assert_null(dg_st_parse(b, len, "nul", &e));
    expect_err(&e, DG_ERR_FORMAT, "not valid UTF-8");
    free(b);

    /* Nesting deeper than cJSON allows: an error, not a stack overflow. */
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 16);
    assert_non_null(deep);
    strcpy(deep, "{\"a\":");
    memset(deep + 5, '[', depth);
    memset(deep + 5 + depth, ']', depth);
    strcpy(deep + 5 + 2 * depth, "}");
    expect_reject(deep, 0, "not valid JSON");
    free(deep);

    /* The writer never emits these, but they are legal and accepted. */
    dg_st_file *f;
    f = expect_accept("{" TENSOR("a", "F32", "[1]", "[0,4]") "," TENSOR("b", "F32", "[1]", "[8,12]") "}", 16);
    dg_st_free(f);  /* a gap between tensors */
    f = expect_accept("{" TENSOR("a", "F32", "[4]", "[0,16]") "," TENSOR("z", "F32", "[0,3]", "[8,8]")
                      "," TENSOR("y", "F32", "[0]", "[8,8]") "}", 16);
    dg_st_free(f);  /* empty tensors inside another's bytes hold nothing, overlap nothing */
    f = expect_accept("{" TENSOR("a", "F32", "[1.0,2e0]", "[0,8]") ",\"x\":{\"dtype\":\"U8\",\"shape\":[1],"
                      "\"data_offsets\":[8,9],\"extra\":true}, \"__metadata__\":null}\n", 9);
    assert_int_equal(dg_st_find(f, "a")->shape[1], 2);
    assert_int_equal(dg_st_meta_count(f), 0);
    dg_st_free(f);  /* integral floats, unknown fields, null metadata, trailing newline */
    f = expect_accept("{" TENSOR("\\u00e9\\\"", "F32", "[]", "[0,4]") "}", 4);
    assert_non_null(dg_st_find(f, "\xc3\xa9\""));
    assert_int_equal(dg_st_find(f, "\xc3\xa9\"")->ndim, 0);
    dg_st_free(f);  /* escapes decoded; a scalar */
}

/* Random byte edits of a valid file: the parser must answer, never crash or
 * read out of bounds (run under ASan), and every accepted file must walk. */
static void test_mutation_fuzz(void **state) {
    (void)state;
    size_t len;
    unsigned char *good = small_file(&len);
    unsigned char *b = malloc(len);
    assert_non_null(b);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(b, good, len);
        int edits = 1 + (int)(s % 4);
        for (int k = 0; k < edits; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(s >> 33) % len;
            static const unsigned char pick[] = {'0', '9', '[', ']', '{', '}', '"', ',', ':', '-', ' ', 0, 0xff};
            b[at] = (s & 0x100) ? (unsigned char)(s >> 20) : pick[(s >> 24) % sizeof pick];
        }
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = (s >> 40) % 8 == 0 ? (size_t)(s >> 20) % (len + 1) : len;
        dg_err e = {0};
        dg_st_file *f = dg_st_parse(b, n, NULL, &e);
        if (!f) {
            assert_true(e.status == DG_ERR_FORMAT);
            assert_true(strlen(e.msg) > 0);
            continue;
        }
        accepted++;
        unsigned sum = 0;
        for (int i = 0; i < dg_st_count(f); i++) {
            const dg_st_tensor *t = dg_st_get(f, i);
            assert_ptr_equal(dg_st_find(f, t->name), t);
            for (size_t j = 0; j < t->nbytes; j++) sum += ((const unsigned char *)t->data)[j];
        }
        (void)sum;
        dg_st_free(f);
    }
    assert_true(accepted > 0);  /* edits to data bytes leave a valid file */
    free(b);
    free(good);
}

static void test_writer_rejects(void **state) {
    (void)state;
    dg_err e = {0};
    dg_st_writer *w = dg_st_writer_create();
    float x[2] = {1, 2};
    assert_int_equal(dg_st_writer_add(w, "x", DG_DTYPE_F32, 1, (int64_t[]){2}, x, &e), DG_OK);
    assert_int_equal(dg_st_writer_add(w, "x", DG_DTYPE_F32, 1, (int64_t[]){2}, x, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "tensor 'x' added twice");
    assert_int_equal(dg_st_writer_add(w, "__metadata__", DG_DTYPE_F32, 1, (int64_t[]){2}, x, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "'__metadata__' is not a tensor name");
    assert_int_equal(dg_st_writer_add(w, "", DG_DTYPE_F32, 1, (int64_t[]){2}, x, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "empty tensor name");
    assert_int_equal(dg_st_writer_add(w, "bad\xc3(", DG_DTYPE_F32, 1, (int64_t[]){2}, x, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "tensor name 'bad?(' is not valid UTF-8");
    assert_int_equal(dg_st_writer_add(w, "y", DG_DTYPE_F32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, x, &e),
                     DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "9 dims");
    assert_int_equal(dg_st_writer_add(w, "y", DG_DTYPE_F32, -1, NULL, x, &e), DG_ERR_ARG);
    assert_int_equal(dg_st_writer_add(w, "y", DG_DTYPE_F32, 1, (int64_t[]){-2}, x, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "tensor 'y': dim 0 is -2");
    assert_int_equal(dg_st_writer_add(w, "y", DG_DTYPE_F32, 2, (int64_t[]){1ll << 40, 1ll << 40}, x, &e),
                     DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "shape too large");
    assert_int_equal(dg_st_writer_add(w, "y", (dg_dtype)99, 1, (int64_t[]){2}, x, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "invalid dtype 99");
    assert_int_equal(dg_st_writer_add(w, "y", DG_DTYPE_F32, 1, (int64_t[]){2}, NULL, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "NULL data");
    assert_int_equal(dg_st_writer_add(w, "y", DG_DTYPE_F32, 1, NULL, x, &e), DG_ERR_ARG);
    assert_int_equal(dg_st_writer_add(NULL, "y", DG_DTYPE_F32, 1, (int64_t[]){2}, x, &e), DG_ERR_ARG);
    assert_int_equal(dg_st_writer_meta(w, "k\xff", "v", &e), DG_ERR_ARG);
    assert_int_equal(dg_st_writer_meta(w, "k", "v\xff", &e), DG_ERR_ARG);
    assert_int_equal(dg_st_writer_meta(w, "k", NULL, &e), DG_ERR_ARG);
    assert_int_equal(dg_st_writer_add(w, "y", DG_DTYPE_F32, 1, (int64_t[]){0}, NULL, &e), DG_OK);  /* empty: NULL ok */

    /* The rejected calls left the writer whole: it writes x and y only. */
    char p[1024];
    path_in(p, sizeof p, "rej.safetensors");
    assert_int_equal(dg_st_writer_write(w, p, &e), DG_OK);
    dg_st_writer_free(w);
    dg_st_file *f = dg_st_load(p, &e);
    assert_non_null(f);
    assert_int_equal(dg_st_count(f), 2);
    assert_int_equal(dg_st_meta_count(f), 0);
    dg_st_free(f);
    remove(p);
}

/* A writer of layouts gives the header of the same writer with data (the file's first bytes),
 * the data following in the order added; it cannot write a file itself. */
static void test_layout_header(void **state) {
    (void)state;
    dg_err e = {0};
    const float a[4] = {1, 2, 3, 4};
    const int16_t b[3] = {-1, 0, 7};
    dg_st_writer *full = dg_st_writer_create(), *lay = dg_st_writer_create();
    assert_int_equal(dg_st_writer_add(full, "a", DG_DTYPE_F32, 2, (int64_t[]){2, 2}, a, &e), DG_OK);
    assert_int_equal(dg_st_writer_add(full, "b", DG_DTYPE_I16, 1, (int64_t[]){3}, b, &e), DG_OK);
    assert_int_equal(dg_st_writer_meta(full, "k", "v", &e), DG_OK);
    assert_int_equal(dg_st_writer_add_layout(lay, "a", DG_DTYPE_F32, 2, (int64_t[]){2, 2}, &e), DG_OK);
    assert_int_equal(dg_st_writer_add_layout(lay, "b", DG_DTYPE_I16, 1, (int64_t[]){3}, &e), DG_OK);
    assert_int_equal(dg_st_writer_meta(lay, "k", "v", &e), DG_OK);
    assert_int_equal(dg_st_writer_add_layout(lay, "b", DG_DTYPE_I16, 1, (int64_t[]){3}, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "tensor 'b' added twice");
    char p[1024];
    path_in(p, sizeof p, "layout.safetensors");
    assert_int_equal(dg_st_writer_write(full, p, &e), DG_OK);
    unsigned char *head = NULL;
    size_t hlen = 0, flen = 0;
    assert_int_equal(dg_st_writer_header(lay, &head, &hlen, &e), DG_OK);
    FILE *fp = fopen(p, "rb");
    assert_non_null(fp);
    unsigned char file[512];
    flen = fread(file, 1, sizeof file, fp);
    fclose(fp);
    assert_int_equal(flen, hlen + sizeof a + sizeof b);
    assert_memory_equal(file, head, hlen);
    assert_memory_equal(file + hlen, a, sizeof a);   /* little-endian hosts */
    free(head);
    remove(p);
    assert_int_equal(dg_st_writer_write(lay, p, &e), DG_ERR_ARG);
    expect_err(&e, DG_ERR_ARG, "tensor 'a' has a layout but no data");
    assert_int_equal(access(p, F_OK), -1);
    dg_st_writer_free(full);
    dg_st_writer_free(lay);
}

static void test_write_fails_cleanly(void **state) {
    (void)state;
    dg_err e = {0};
    dg_st_writer *w = dg_st_writer_create();
    float x[3] = {1, 2, 3};
    assert_int_equal(dg_st_writer_add(w, "x", DG_DTYPE_F32, 1, (int64_t[]){3}, x, &e), DG_OK);

    assert_int_equal(dg_st_writer_write(w, "/nonexistent/x.safetensors", &e), DG_ERR_IO);
    expect_err(&e, DG_ERR_IO, "/nonexistent/x.safetensors");
    struct stat sb;
    assert_int_not_equal(stat("/nonexistent/x.safetensors", &sb), 0);

    /* The target is a folder: the temporary file is written, the rename
     * fails, and the temporary file must be gone again. */
    int before = dir_entries();
    char p[1024];
    path_in(p, sizeof p, "sub");
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(dg_st_writer_write(w, p, &e), DG_ERR_IO);
    expect_err(&e, DG_ERR_IO, "sub");
    assert_int_equal(dir_entries(), before + 1);  /* just "sub" */
    assert_int_equal(rmdir(p), 0);

    /* An old file survives a failed write untouched: here the new one cannot
     * even start because its folder is read-only (skipped as root). */
    char sub[1024], old[1100];
    path_in(sub, sizeof sub, "ro");
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(old, sizeof old, "%s/old.safetensors", sub);
    assert_int_equal(dg_st_writer_write(w, old, &e), DG_OK);
    assert_int_equal(chmod(sub, 0500), 0);
    if (access(sub, W_OK) != 0) {
        dg_st_writer *w2 = dg_st_writer_create();
        assert_int_equal(dg_st_writer_write(w2, old, &e), DG_ERR_IO);
        dg_st_writer_free(w2);
        dg_st_file *f = dg_st_load(old, &e);
        assert_non_null(f);
        assert_int_equal(dg_st_count(f), 1);
        dg_st_free(f);
    }
    assert_int_equal(chmod(sub, 0700), 0);
    assert_int_equal(remove(old), 0);
    assert_int_equal(rmdir(sub), 0);
    dg_st_writer_free(w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_table),
        cmocka_unit_test(test_null_safe),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_read_as),
        cmocka_unit_test(test_reference_bytes),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_header_length),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_mutation_fuzz),
        cmocka_unit_test(test_writer_rejects),
        cmocka_unit_test(test_write_fails_cleanly),
        cmocka_unit_test(test_layout_header),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
