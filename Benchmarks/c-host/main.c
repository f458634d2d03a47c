// switchyard-c-host: the pinned floor for the host's own cost. A plain C libuv host that spawns a plugin, sends
// `$/ping` requests one at a time over the same kind of pipes and waits for each response line, exactly the work
// Switchyard's host does for a ping minus the Swift: framing, parsing and bookkeeping. Prints the round trips in
// nanoseconds as one JSON array.
//
// With WINDOW, the floor for pipelined messages: COUNT requests (`$/ping`, or `coordinator/route` with `route`) kept
// at most WINDOW in flight, a new one written as each answer arrives, as the Switchyard host's burst does; prints
// {"elapsedNs": N}. (The C echo child has no window: it compares unlike things.)
//
//   switchyard-c-host PLUGIN COUNT
//   switchyard-c-host PLUGIN COUNT WINDOW [ping|route]
//
// With WINDOW 0 and `syscalls`: sequential pings, then the read and write calls (`/proc/PID/io` syscr, syscw) of
// this host and of the plugin over the last nine tenths, as {"messages", "host": [reads, writes], "plugin": […]}.
//
//   switchyard-c-host PLUGIN COUNT 0 syscalls
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static uv_loop_t *loop;
static uv_process_t process;
static uv_pipe_t to_child, from_child;
static uint64_t *samples;
static long count, done;
static uint64_t started;
static char line[128];
static int line_length;
static long pending_newlines;
static long window, sent;
static int routes;
static uint64_t pipeline_started;
/* Syscall mode: read and write calls of both processes between the warm-up's end and the last answer. */
static int count_syscalls;
static long long host_io[2][2], plugin_io[2][2];

/* syscr and syscw of /proc/PID/io (pid 0: this process). */
static void read_io(int pid, long long out[2]) {
    char path[64];
    if (pid) snprintf(path, sizeof path, "/proc/%d/io", pid); else snprintf(path, sizeof path, "/proc/self/io");
    FILE *file = fopen(path, "r");
    out[0] = out[1] = -1;
    if (!file) return;
    char name[32];
    long long value;
    while (fscanf(file, "%31s %lld", name, &value) == 2) {
        if (strcmp(name, "syscr:") == 0) out[0] = value;
        if (strcmp(name, "syscw:") == 0) out[1] = value;
    }
    fclose(file);
}

static void send_more(void);

static void send_ping(void);

static void on_write(uv_write_t *request, int status) { free(request); (void)status; }

static void on_batch_written(uv_write_t *request, int status) {
    free(request->data);
    free(request);
    (void)status;
}

static void allocate(uv_handle_t *handle, size_t suggested, uv_buf_t *buffer) {
    (void)handle;
    buffer->base = malloc(suggested);
    buffer->len = suggested;
}

/* Pipelined: each answer lets one more request out, until COUNT are answered. */
static void on_pipelined_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buffer) {
    (void)stream;
    if (nread > 0) {
        for (ssize_t i = 0; i < nread; i++) {
            if (buffer->base[i] == '\n') done++;
        }
        if (done >= count) {
            uint64_t elapsed = uv_hrtime() - pipeline_started;
            uv_read_stop((uv_stream_t *)&from_child);
            uv_close((uv_handle_t *)&to_child, NULL);
            uv_close((uv_handle_t *)&from_child, NULL);
            printf("{\"elapsedNs\":%llu}\n", (unsigned long long)elapsed);
        } else {
            send_more();
        }
    }
    free(buffer->base);
}

/* Writes as many requests as the window allows, in one write (as the host coalesces a turn's writes). */
static void send_more(void) {
    long room = window - (sent - done);
    if (room <= 0 || sent >= count) return;
    if (room > count - sent) room = count - sent;
    /* The longest line is the route with a 19-digit id (about 170 bytes): 256 each, and each write bounded. */
    size_t capacity = (size_t)room * 256;
    char *batch = malloc(capacity);
    if (!batch) { fprintf(stderr, "out of memory\n"); exit(1); }
    size_t length = 0;
    for (long i = 0; i < room; i++) {
        sent++;
        int written = (routes
            ? snprintf(batch + length, capacity - length,
                  "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"coordinator/route\",\"params\":{\"instance\":1,"
                  "\"type\":\"bench\",\"route\":\"item\",\"transition\":\"push\",\"params\":{\"id\":\"42\"}}}\n", sent)
            : snprintf(batch + length, capacity - length,
                  "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"$/ping\",\"params\":{}}\n", sent));
        if (written < 0 || (size_t)written >= capacity - length) { fprintf(stderr, "line too long\n"); exit(1); }
        length += (size_t)written;
    }
    uv_write_t *request = malloc(sizeof *request);
    request->data = batch;
    uv_buf_t buffer = uv_buf_init(batch, (unsigned)length);
    if (uv_write(request, (uv_stream_t *)&to_child, &buffer, 1, on_batch_written) != 0) {
        fprintf(stderr, "cannot write to the plugin\n");
        exit(1);
    }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buffer) {
    (void)stream;
    if (nread > 0) {
        for (ssize_t i = 0; i < nread; i++) {
            if (buffer->base[i] != '\n') continue;
            samples[done++] = uv_hrtime() - started;
            if (count_syscalls && (done == (count / 10 > 0 ? count / 10 : 1) || done == count)) {
                int at = done == count ? 1 : 0;
                read_io(0, host_io[at]);
                read_io(process.pid, plugin_io[at]);
            }
            if (done == count) {
                uv_read_stop((uv_stream_t *)&from_child);
                uv_close((uv_handle_t *)&to_child, NULL);
                uv_close((uv_handle_t *)&from_child, NULL);
            } else {
                send_ping();
            }
        }
    }
    free(buffer->base);
}

static void send_ping(void) {
    line_length = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"$/ping\",\"params\":{}}\n", done + 1);
    uv_write_t *request = malloc(sizeof *request);
    uv_buf_t buffer = uv_buf_init(line, (unsigned)line_length);
    started = uv_hrtime();
    uv_write(request, (uv_stream_t *)&to_child, &buffer, 1, on_write);
}

static void on_exit_cb(uv_process_t *child, int64_t status, int signal) {
    (void)status; (void)signal;
    uv_close((uv_handle_t *)child, NULL);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: switchyard-c-host PLUGIN COUNT [WINDOW [ping|route]]\n"); return 64; }
    count = atol(argv[2]);
    window = argc > 3 ? atol(argv[3]) : 0;
    routes = argc > 4 && strcmp(argv[4], "route") == 0;
    count_syscalls = argc > 4 && strcmp(argv[4], "syscalls") == 0;
    samples = calloc((size_t)count, sizeof *samples);
    loop = uv_default_loop();
    uv_pipe_init(loop, &to_child, 0);
    uv_pipe_init(loop, &from_child, 0);
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    stdio[0].data.stream = (uv_stream_t *)&to_child;
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&from_child;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    char *args[] = {argv[1], NULL};
    uv_process_options_t options = {0};
    options.file = argv[1];
    options.args = args;
    options.stdio = stdio;
    options.stdio_count = 3;
    options.exit_cb = on_exit_cb;
    if (uv_spawn(loop, &process, &options) != 0) { fprintf(stderr, "cannot spawn %s\n", argv[1]); return 1; }
    if (window > 0) {
        uv_read_start((uv_stream_t *)&from_child, allocate, on_pipelined_read);
        pipeline_started = uv_hrtime();
        send_more();
        uv_run(loop, UV_RUN_DEFAULT);
        return 0;
    }
    uv_read_start((uv_stream_t *)&from_child, allocate, on_read);
    send_ping();
    uv_run(loop, UV_RUN_DEFAULT);
    if (count_syscalls) {
        long measured = count - (count / 10 > 0 ? count / 10 : 1);
        printf("{\"messages\":%ld,\"host\":[%lld,%lld],\"plugin\":[%lld,%lld]}\n", measured,
            host_io[1][0] - host_io[0][0], host_io[1][1] - host_io[0][1], plugin_io[1][0] - plugin_io[0][0],
            plugin_io[1][1] - plugin_io[0][1]);
        return 0;
    }
    printf("[");
    for (long i = 0; i < count; i++) printf(i ? ",%llu" : "%llu", (unsigned long long)samples[i]);
    printf("]\n");
    return 0;
}
