#include "CSwitchyardStdio.h"
#include <errno.h>
#include <stdio.h>
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
