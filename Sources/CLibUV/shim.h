#ifndef SWITCHYARD_CLIBUV_SHIM_H
#define SWITCHYARD_CLIBUV_SHIM_H
// libuv plus the few POSIX/Linux headers the wrapper needs. Only SwitchyardUV imports this module.
#include <uv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <termios.h>
#include <poll.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <malloc.h>
#include <dirent.h>
#include <stdlib.h>

// Macros and inline helpers Swift cannot import directly become real functions here.
static inline int switchyard_cloexec_from(int lowfd) {
    // close_range(CLOSE_RANGE_CLOEXEC) is one syscall; older kernels fall back to a /proc walk in Swift.
#ifdef SYS_close_range
    return (int)syscall(SYS_close_range, (unsigned int)lowfd, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */);
#else
    return -1;
#endif
}

static inline int switchyard_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    return -1;
#endif
}

static inline int switchyard_pidfd_send_signal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, (void *)0, 0U);
#else
    return -1;
#endif
}

// Linux namespaces and prctl: the glibc wrappers need _GNU_SOURCE (or are variadic, which Swift cannot call).
#define SWITCHYARD_CLONE_NEWPID 0x20000000
static inline int switchyard_unshare_pid(void) { return (int)syscall(SYS_unshare, SWITCHYARD_CLONE_NEWPID); }
static inline int switchyard_setns_pid(int fd) { return (int)syscall(SYS_setns, fd, SWITCHYARD_CLONE_NEWPID); }
static inline int switchyard_set_child_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

static inline int switchyard_peer_uid(int fd, unsigned int *uid, int *pid) {
    // struct ucred needs _GNU_SOURCE, which a module header cannot set reliably; same layout.
    struct { int pid; unsigned int uid; unsigned int gid; } cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}

// sched_setaffinity and CPU_SET need _GNU_SOURCE; declared here with the kernel's plain mask layout.
extern int sched_setaffinity(int pid, unsigned long size, const void *mask);
// Every thread of the process, not only the caller: Swift concurrency and libuv loops already run on other
// threads, and a thread (or a child) inherits the mask of the thread that creates it.
static inline int switchyard_pin_cpu(int cpu) {
    unsigned long mask[16] = {0};
    if (cpu < 0 || cpu >= 16 * 64) return -1;
    mask[cpu / 64] |= 1UL << (cpu % 64);
    int result = sched_setaffinity(0, sizeof(mask), mask);
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return result;
    struct dirent *task;
    while ((task = readdir(tasks)) != NULL) {
        int tid = atoi(task->d_name);
        if (tid > 0 && sched_setaffinity(tid, sizeof(mask), mask) != 0) result = -1;
    }
    closedir(tasks);
    return result;
}

// pipe2 and accept4 need _GNU_SOURCE too: descriptors close-on-exec from birth, so no fork on another thread
// between creation and a later fcntl can inherit them.
extern int pipe2(int pipefd[2], int flags);
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
static inline int switchyard_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
static inline int switchyard_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }

// posix_spawn_file_actions_addchdir_np (glibc 2.29) is declared only under _GNU_SOURCE.
#include <spawn.h>
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
static inline int switchyard_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

// POSIX_SPAWN_SETSID (glibc 2.26) is defined only under _GNU_SOURCE too; its value is fixed by the ABI.
#ifdef POSIX_SPAWN_SETSID
#define SWITCHYARD_POSIX_SPAWN_SETSID POSIX_SPAWN_SETSID
#else
#define SWITCHYARD_POSIX_SPAWN_SETSID 0x80
#endif
static inline short switchyard_posix_spawn_setsid(void) { return SWITCHYARD_POSIX_SPAWN_SETSID; }

static inline int switchyard_wifexited(int status) { return WIFEXITED(status); }
static inline int switchyard_wexitstatus(int status) { return WEXITSTATUS(status); }


/* Gives free heap pages back to the kernel (glibc keeps a high-water mark otherwise). */
static inline int switchyard_trim_heap(void) { return malloc_trim(0); }

/* Fixes glibc's mmap and trim thresholds (setting them turns off their growth after each large free). */
static inline void switchyard_fix_heap_thresholds(int mmap_bytes, int trim_bytes) {
    mallopt(M_MMAP_THRESHOLD, mmap_bytes);
    mallopt(M_TRIM_THRESHOLD, trim_bytes);
}

#endif
