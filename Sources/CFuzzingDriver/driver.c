#include "CFuzzingDriver.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// libFuzzer's entry for programs with their own main. Weak: a plain build does not link libFuzzer,
// and then the address is null. Linking with -sanitize=fuzzer pulls it in, and since this program
// defines main, libFuzzer's own main is never taken from its archive.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size))
    __attribute__((weak));

int af_fuzz_is_instrumented(void) { return LLVMFuzzerRunDriver != NULL; }

static int replay_file(const char *path, af_fuzz_callback callback) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    size_t capacity = 4096, size = 0;
    uint8_t *bytes = malloc(capacity);
    size_t read;
    while (bytes != NULL && (read = fread(bytes + size, 1, capacity - size, file)) > 0) {
        size += read;
        if (size == capacity) {
            capacity *= 2;
            uint8_t *grown = realloc(bytes, capacity);
            if (grown == NULL) free(bytes);
            bytes = grown;
        }
    }
    fclose(file);
    if (bytes == NULL) return 1;
    callback(bytes, size);
    free(bytes);
    return 0;
}

static int replay(const char *path, af_fuzz_callback callback) {
    struct stat info;
    if (stat(path, &info) != 0) {
        fprintf(stderr, "cannot find %s\n", path);
        return 1;
    }
    if (!S_ISDIR(info.st_mode)) return replay_file(path, callback);
    DIR *directory = opendir(path);
    if (directory == NULL) return 1;
    int failures = 0;
    struct dirent *entry;
    while ((entry = readdir(directory)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        size_t length = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(length);
        if (child == NULL) {
            failures++;
            continue;
        }
        snprintf(child, length, "%s/%s", path, entry->d_name);
        failures += replay(child, callback);
        free(child);
    }
    closedir(directory);
    return failures;
}

int af_fuzz_main(int argc, char **argv, af_fuzz_callback callback) {
    if (LLVMFuzzerRunDriver != NULL) return LLVMFuzzerRunDriver(&argc, &argv, callback);
    int failures = 0;
    for (int index = 1; index < argc; index++) {
        if (argv[index][0] == '-') continue;  // a libFuzzer flag: nothing to replay
        failures += replay(argv[index], callback);
    }
    return failures == 0 ? 0 : 1;
}
