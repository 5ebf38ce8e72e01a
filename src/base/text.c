/* UTF-8 validation and message-safe text (see text.h). */
#define _POSIX_C_SOURCE 200809L  /* strnlen */
#include "base/text.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "difgames/status.h"

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid (overlong forms, surrogates,
 * > U+10FFFF, and NUL, which no name, key or header may hold). */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c == 0) return 0;
    if (c < 0x80) return 1;
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0)      { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

size_t dg_utf8_check(const unsigned char *s, size_t n) {
    size_t i = 0;
    for (size_t k; i < n && (k = utf8_seq(s + i, n - i)) > 0;) i += k;
    return i;
}

void dg_text_append(char *buf, size_t cap, size_t *pos, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t o = *pos;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(u + i, n - i), w = k ? k : 1;
        if (o + w + 4 > cap) {  /* room for "..." and the NUL */
            if (o + 4 <= cap) { memcpy(buf + o, "...", 3); o += 3; }
            break;
        }
        if (!k || u[i] < 0x20 || u[i] == 0x7F) buf[o++] = '?';
        else { memcpy(buf + o, u + i, k); o += k; }
        i += w;
    }
    if (cap) buf[o < cap ? o : cap - 1] = 0;
    *pos = o;
}

const char *dg_err_echo(char *buf, size_t size, const char *text, size_t len) {
    if (!buf || !size) return "";
    if (!text) text = "";
    if (len == (size_t)-1) len = strlen(text);
    else len = strnlen(text, len);
    size_t pos = 0;
    buf[0] = 0;
    dg_text_append(buf, size, &pos, "'", 1);
    if (len <= DG_ECHO_SHOW) {
        dg_text_append(buf, size, &pos, text, len);
        dg_text_append(buf, size, &pos, "'", 1);
        return buf;
    }
    size_t items = 1, cut = DG_ECHO_SHOW;
    for (size_t i = 0; i < len; i++) items += text[i] == ',';
    while (cut > 0 && text[cut - 1] != ',') cut--;  /* after the last whole item shown */
    if (cut == 0)  /* no comma that early: DG_ECHO_SHOW bytes, not in the middle of a character */
        for (cut = DG_ECHO_SHOW; cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80;) cut--;
    dg_text_append(buf, size, &pos, text, cut);
    char count[48];
    const int n = items > 1 ? snprintf(count, sizeof count, "...' (%zu values)", items)
                            : snprintf(count, sizeof count, "...' (%zu characters)", len);
    dg_text_append(buf, size, &pos, count, (size_t)n);
    return buf;
}
