/* Replays a fuzz corpus through a harness's LLVMFuzzerTestOneInput without
 * libFuzzer: the test suite runs it under ASan+UBSan on every committed input.
 * usage: replay DIR...   (prints "N passed, 0 failed"; a crash fails the test) */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    int n = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "replay: cannot open %s\n", argv[a]);
            return 1;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], de->d_name);
            unsigned char *buf;
            size_t len;
            if (dg_file_read_all(path, &buf, &len, NULL) != DG_OK) continue;
            LLVMFuzzerTestOneInput(buf, len);
            free(buf);
            n++;
        }
        closedir(d);
    }
    if (n == 0) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    printf("%d passed, 0 failed\n", n);
    return 0;
}
