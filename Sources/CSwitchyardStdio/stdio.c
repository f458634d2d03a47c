#define _GNU_SOURCE
#include "CSwitchyardStdio.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#include <sys/syscall.h>

// libdispatch's run-loop hooks, exported for CoreFoundation (swift-corelibs-foundation's CFRunLoop drives the main
// queue with exactly these two). On Linux the handle is an eventfd that libdispatch writes whenever something is
// queued on the main queue, from any thread.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);
#endif

void switchyard_redirect_stdout_to_stderr(void) {
    fflush(stdout);
    // glibc's stdin/stdout/stderr are ordinary variables that programs may set ("The GNU C Library", 12.2).
    stdout = stderr;
}

int switchyard_is_main_thread(void) {
#if defined(__linux__)
    return syscall(SYS_gettid) == getpid();
#else
    return 0;
#endif
}

int switchyard_main_queue_handle(void) {
#if defined(__linux__)
    return _dispatch_get_main_queue_handle_4CF();
#else
    return -1;
#endif
}

void switchyard_main_queue_drain(int handle) {
#if defined(__linux__)
    eventfd_t ignored;
    // Non-blocking (libdispatch creates it with EFD_NONBLOCK): EAGAIN just means nobody signalled since.
    (void)eventfd_read(handle, &ignored);
    _dispatch_main_queue_callback_4CF(NULL);
#else
    (void)handle;
#endif
}

int switchyard_stdio_wait(int input, int queue) {
    struct pollfd fds[2] = {{.fd = input, .events = POLLIN}, {.fd = queue, .events = POLLIN}};
    for (;;) {
        int count = poll(fds, queue >= 0 ? 2 : 1, -1);
        if (count >= 0) break;
        if (errno != EINTR) return -errno;
    }
    int ready = 0;
    // POLLHUP without POLLIN is how a pipe reports that its writer closed: a read then returns 0.
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) ready |= 1;
    if (queue >= 0 && (fds[1].revents & POLLIN)) ready |= 2;
    return ready;
}

long switchyard_stdio_read(int fd, uint8_t *buffer, long capacity) {
    for (;;) {
        ssize_t count = read(fd, buffer, (size_t)capacity);
        if (count >= 0) return (long)count;
        if (errno != EINTR) return -errno;
    }
}
