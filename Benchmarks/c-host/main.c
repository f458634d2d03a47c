// switchyard-c-host: the pinned floor for the host's own cost. A plain C libuv host that spawns a plugin, sends
// `$/ping` requests one at a time over the same kind of pipes and waits for each response line, exactly the work
// Switchyard's host does for a ping minus the Swift: framing, parsing and bookkeeping. Prints the round trips in
// nanoseconds as one JSON array.
//
//   switchyard-c-host PLUGIN COUNT
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

static void send_ping(void);

static void on_write(uv_write_t *request, int status) { free(request); (void)status; }

static void allocate(uv_handle_t *handle, size_t suggested, uv_buf_t *buffer) {
    (void)handle;
    buffer->base = malloc(suggested);
    buffer->len = suggested;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buffer) {
    (void)stream;
    if (nread > 0) {
        for (ssize_t i = 0; i < nread; i++) {
            if (buffer->base[i] != '\n') continue;
            samples[done++] = uv_hrtime() - started;
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
    if (argc < 3) { fprintf(stderr, "usage: switchyard-c-host PLUGIN COUNT\n"); return 64; }
    count = atol(argv[2]);
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
    uv_read_start((uv_stream_t *)&from_child, allocate, on_read);
    send_ping();
    uv_run(loop, UV_RUN_DEFAULT);
    printf("[");
    for (long i = 0; i < count; i++) printf(i ? ",%llu" : "%llu", (unsigned long long)samples[i]);
    printf("]\n");
    return 0;
}
