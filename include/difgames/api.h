/* difgames api: what a program linked with libdifgames.so can call.
 *
 * The library is built with -fvisibility=hidden: a function is exported from the shared library
 * only when its declaration in an installed header (include/difgames/) starts with DG_API. The
 * rest, the internal headers' functions under src/, stay private to the library (the static
 * library still holds them for the command and the tests). A test (tests/exports_test.sh) lists
 * the shared library's exported names and refuses any that is not public. */
#ifndef DIFGAMES_API_H
#define DIFGAMES_API_H

#if defined(__GNUC__) || defined(__clang__)
#define DG_API __attribute__((visibility("default")))
#else
#define DG_API
#endif

#endif
