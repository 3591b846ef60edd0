/* replay_main.c: runs a fuzz target over files (or every file of directories) given on
 * the command line, so the corpora are replayed as ordinary tests in every build,
 * including the sanitizer build. Skips missing arguments, but fails (exit 1) when it
 * replayed nothing at all or could not read a file it found: a replay that checks no
 * input must not pass. A property that does not hold aborts (fuzz_check.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static int unreadable;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        unreadable++;
        return 0;
    }
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            unsigned char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return 0;
            }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        if (!k)
            break;
        n += k;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0)
            continue;
        if (!S_ISDIR(sb.st_mode)) {
            files += run_file(argv[i]);
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
                files += run_file(p);
        }
        closedir(d);
    }
    fprintf(stderr, "replayed %d inputs\n", files);
    if (files == 0) {
        fprintf(stderr, "no input replayed: is the corpus folder missing?\n");
        return 1;
    }
    return unreadable ? 1 : 0;
}
