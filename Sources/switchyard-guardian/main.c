// switchyard-guardian: makes sure plugins never outlive their host.
//
// The host spawns one guardian at start-up, in its own session, and writes "+PGID\n" for every plugin process
// group it spawns and "-PGID\n" when it has reaped one. When the guardian's stdin reaches EOF, the host is gone
// (or shutting down): it SIGKILLs every process group still registered and exits.
//
// This costs one process per host instead of a launcher exec per plugin spawn (uv_spawn has no pre-exec hook for
// PR_SET_PDEATHSIG), and it also catches plugins that ignore stdin EOF or are stopped (SIGSTOP) when the host
// is SIGKILLed.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void) {
    // Only EOF on stdin ends the guardian: a terminal's Ctrl-C or a stray SIGTERM must not disarm it.
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);

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
    return 0;
}
