// switchyard-guardian: makes sure plugins, and everything they start, never outlive their host.
//
// The host spawns one guardian per host and keeps its stdin open. When the guardian's stdin reaches EOF, the host
// is gone (or shutting down), and the guardian ends everything it contains. What "contains" means depends on the
// containment the host chose (see Sources/SwitchyardHost/Guardian.swift):
//
//   --pid-namespace   The guardian is PID 1 of a PID namespace the host spawns every plugin into. Exiting is all it
//                     has to do: when a namespace's init dies the kernel SIGKILLs every process in it, including
//                     ones that called setsid() or double-forked. As init it also inherits every orphan in the
//                     namespace, so it reaps them (otherwise they would stay zombies until the end).
//   --cgroup PATH     Plugins are moved into the cgroup v2 directory PATH; on EOF the guardian writes 1 to its
//                     cgroup.kill (the kernel kills every member, whatever its session), waits until it is empty
//                     and removes it.
//   (always)          The host writes "+PGID\n" for every plugin process group it spawns and "-PGID\n" when it has
//                     reaped one; on EOF each registered group is SIGKILLed. Alone, this misses descendants that
//                     left the group (setsid); it is the fallback when neither of the above is available.
//
// One process per host instead of a launcher exec per plugin spawn (uv_spawn has no pre-exec hook for
// PR_SET_PDEATHSIG); it also catches plugins that ignore stdin EOF or are stopped (SIGSTOP) when the host is
// SIGKILLed.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int *groups = NULL;
static size_t count = 0, capacity = 0;

static void add(int pgid) {
    if (count == capacity) {
        size_t next = capacity ? capacity * 2 : 64;
        int *grown = realloc(groups, next * sizeof(int));
        if (!grown) return;
        groups = grown;
        capacity = next;
    }
    groups[count++] = pgid;
}

static void drop(int pgid) {
    for (size_t i = 0; i < count; i++) {
        if (groups[i] == pgid) {
            groups[i] = groups[--count];
            return;
        }
    }
}

// As a namespace's init, orphans are ours to reap. The host's plugins are the host's children, not ours, so this
// never takes an exit status the host's libuv loop is waiting for.
static void reap_orphans(int signal_number) {
    (void)signal_number;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
    errno = saved;
}

static int write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t written = write(fd, text, strlen(text));
    close(fd);
    return written < 0 ? -1 : 0;
}

// Kills every member of the cgroup and removes it once the kernel reports it empty ("populated 0" in
// cgroup.events, which is signalled with POLLPRI when it changes).
static void kill_cgroup(const char *cgroup) {
    char path[4096];
    snprintf(path, sizeof path, "%s/cgroup.kill", cgroup);
    if (write_text(path, "1") != 0) {
        // Kernels before 5.14 have no cgroup.kill: signal the members one by one (a fork racing this can escape).
        snprintf(path, sizeof path, "%s/cgroup.procs", cgroup);
        FILE *procs = fopen(path, "re");
        if (procs) {
            int pid;
            while (fscanf(procs, "%d", &pid) == 1) kill(pid, SIGKILL);
            fclose(procs);
        }
    }
    snprintf(path, sizeof path, "%s/cgroup.events", cgroup);
    int events = open(path, O_RDONLY | O_CLOEXEC);
    for (int attempt = 0; events >= 0 && attempt < 50; attempt++) {
        char buffer[256];
        ssize_t length = pread(events, buffer, sizeof buffer - 1, 0);
        if (length <= 0) break;
        buffer[length] = 0;
        if (strstr(buffer, "populated 0")) break;
        struct pollfd wait_for = {.fd = events, .events = POLLPRI};
        poll(&wait_for, 1, 100);
    }
    if (events >= 0) close(events);
    // A fault experiment's resource limits may have given plugins cgroups of their own below this one
    // (Guardian+Limits.swift): empty now, they must go before their parent can.
    DIR *directory = opendir(cgroup);
    if (directory) {
        struct dirent *entry;
        while ((entry = readdir(directory)) != NULL) {
            if (entry->d_type != DT_DIR || entry->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", cgroup, entry->d_name);
            rmdir(path);
        }
        closedir(directory);
    }
    rmdir(cgroup);
}

int main(int argc, char **argv) {
    // Only EOF on stdin ends the guardian: a terminal's Ctrl-C or a stray SIGTERM must not disarm it.
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);

    const char *cgroup = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pid-namespace") == 0) {
            struct sigaction action;
            memset(&action, 0, sizeof action);
            action.sa_handler = reap_orphans;
            action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
            sigemptyset(&action.sa_mask);
            sigaction(SIGCHLD, &action, NULL);
        } else if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc) {
            cgroup = argv[++i];
        }
    }

    char line[64];
    while (fgets(line, sizeof line, stdin) != NULL) {
        char *end = NULL;
        long pgid = strtol(line + 1, &end, 10);
        if (pgid <= 1 || end == line + 1) continue;
        if (line[0] == '+') add((int)pgid);
        else if (line[0] == '-') drop((int)pgid);
    }
    for (size_t i = 0; i < count; i++) {
        kill(-groups[i], SIGKILL);
    }
    if (cgroup) kill_cgroup(cgroup);
    // In a PID namespace, returning is what kills everything: the kernel ends the namespace with its init.
    return 0;
}
