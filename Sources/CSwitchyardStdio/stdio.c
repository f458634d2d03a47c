#include "CSwitchyardStdio.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void switchyard_redirect_stdout_to_stderr(void) {
    fflush(stdout);
    // glibc's stdin/stdout/stderr are ordinary variables that programs may set ("The GNU C Library", 12.2).
    stdout = stderr;
}

long switchyard_stdio_read(int fd, uint8_t *buffer, long capacity) {
    for (;;) {
        ssize_t count = read(fd, buffer, (size_t)capacity);
        if (count >= 0) return (long)count;
        if (errno != EINTR) return -errno;
    }
}

long switchyard_stdio_read_at(int fd, uint8_t *buffer, long offset, long capacity) {
    if (offset < 0 || offset >= capacity) return -EINVAL;
    return switchyard_stdio_read(fd, buffer + offset, capacity - offset);
}

long switchyard_find_newline(const uint8_t *buffer, long from, long to) {
    if (from < 0 || from >= to) return -1;
    const uint8_t *found = memchr(buffer + from, '\n', (size_t)(to - from));
    return found ? (long)(found - buffer) : -1;
}

long switchyard_stdio_write_all(int fd, const uint8_t *buffer, long count) {
    long written = 0;
    while (written < count) {
        ssize_t result = write(fd, buffer + written, (size_t)(count - written));
        if (result >= 0) {
            written += (long)result;
        } else if (errno != EINTR) {
            return -errno;
        }
    }
    return written;
}
