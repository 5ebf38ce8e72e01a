/* Text checks shared by the readers (internal): UTF-8 validation, and text made safe to quote in a
 * one-line error message. */
#ifndef DG_BASE_TEXT_H
#define DG_BASE_TEXT_H

#include <stddef.h>

/* Offset of the first byte of s[0, n) that does not begin a well-formed UTF-8 character (overlong
 * forms, surrogates, values past U+10FFFF and NUL are not), or n when every one does. */
size_t dg_utf8_check(const unsigned char *s, size_t n);
/* Appends n bytes of s to buf (capacity cap, current length *pos) for a message: control bytes and
 * invalid UTF-8 become '?'; when full, the text is cut at a character boundary and ends in "...".
 * buf stays NUL-terminated. */
void   dg_text_append(char *buf, size_t cap, size_t *pos, const char *s, size_t n);

#endif
