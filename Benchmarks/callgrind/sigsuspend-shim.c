// Preloaded into the programs switchyard-bench runs under valgrind (not built by SwiftPM: the bench compiles it with
// `cc -shared` when it counts instructions). libdispatch parks a thread in sigsuspend() on a `static const sigset_t`
// in .rodata; valgrind 3.19's rt_sigsuspend wrapper writes into the caller's mask and dies on the read-only page
// ("VALGRIND INTERNAL ERROR: Valgrind received a signal 11"). A copy on the stack is writable.
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, (size_t)(_NSIG / 8));
}
