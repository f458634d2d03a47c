#ifndef SWITCHYARD_SYSTEM_SHIM_H
#define SWITCHYARD_SYSTEM_SHIM_H
// What Swift cannot call directly, and nothing else: macros, variadic functions, declarations glibc shows only under
// _GNU_SOURCE (a module header cannot set it: <sys/socket.h> and friends are already built without it), and C's
// `stdout` global. The logic (EINTR retries, errno, loops) is Swift, in SwitchyardSystem.

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

// Raw syscalls glibc wraps late or not at all; -1 with errno set, as any syscall.
static inline int switchyard_close_range_cloexec(int lowfd) {
#ifdef SYS_close_range
    return (int)syscall(SYS_close_range, (unsigned int)lowfd, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static inline int switchyard_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static inline int switchyard_pidfd_send_signal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, (void *)0, 0U);
#else
    errno = ENOSYS;
    return -1;
#endif
}

// Linux namespaces (the glibc wrappers need _GNU_SOURCE) and prctl (variadic).
#define SWITCHYARD_CLONE_NEWPID 0x20000000
static inline int switchyard_unshare_pid(void) { return (int)syscall(SYS_unshare, SWITCHYARD_CLONE_NEWPID); }
static inline int switchyard_setns_pid(int fd) { return (int)syscall(SYS_setns, fd, SWITCHYARD_CLONE_NEWPID); }
static inline int switchyard_set_child_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }
// prlimit(2) on another process (glibc declares it only under _GNU_SOURCE): limits[0] is the soft limit, limits[1]
// the hard one, 64-bit whatever the platform.
static inline int switchyard_prlimit(int pid, int resource, const unsigned long long *new_limits,
                                     unsigned long long *old_limits) {
    return (int)syscall(SYS_prlimit64, pid, resource, new_limits, old_limits);
}

// struct ucred needs _GNU_SOURCE; this is its layout (pid, uid, gid).
struct switchyard_ucred { int pid; unsigned int uid; unsigned int gid; };

// sched_setaffinity, pipe2, accept4 and posix_spawn_file_actions_addchdir_np are declared only under _GNU_SOURCE.
extern int sched_setaffinity(int pid, unsigned long size, const void *mask);
extern int pipe2(int pipefd[2], int flags);
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);

// POSIX_SPAWN_SETSID (glibc 2.26) is defined only under _GNU_SOURCE too; its value is fixed by the ABI.
#ifdef POSIX_SPAWN_SETSID
#define SWITCHYARD_POSIX_SPAWN_SETSID POSIX_SPAWN_SETSID
#else
#define SWITCHYARD_POSIX_SPAWN_SETSID 0x80
#endif
static inline short switchyard_posix_spawn_setsid(void) { return SWITCHYARD_POSIX_SPAWN_SETSID; }

// glibc's malloc tuning: mallopt's parameters are macros.
static inline int switchyard_trim_heap(void) { return malloc_trim(0); }
static inline void switchyard_fix_heap_thresholds(int mmap_bytes, int trim_bytes) {
    mallopt(M_MMAP_THRESHOLD, mmap_bytes);
    mallopt(M_TRIM_THRESHOLD, trim_bytes);
}

// C stdio's `stdout` is a global Swift 6 will not assign. glibc's stdin/stdout/stderr are ordinary variables that
// programs may set ("The GNU C Library", 12.2).
static inline void switchyard_redirect_stdout_to_stderr(void) {
    fflush(stdout);
    stdout = stderr;
}

#endif
