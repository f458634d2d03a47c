// switchyard-c-plugin: the smallest plugin that speaks the protocol, in C, for the benchmark's floors. It answers
// `initialize` with a canned route table and every other request with `{}` (echoing its numeric or string id), and
// ignores notifications. Line parsing is a scan for "id" and "method": enough for the host's own well-formed lines,
// and as cheap as a plugin can be. Exits at EOF.
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char out[1 << 16];
static size_t out_length;

static void flush_out(void) {
    size_t offset = 0;
    while (offset < out_length) {
        ssize_t written = write(1, out + offset, out_length - offset);
        if (written <= 0) _exit(0);
        offset += (size_t)written;
    }
    out_length = 0;
}

static void append(const char *text, size_t length) {
    if (out_length + length > sizeof out) flush_out();
    memcpy(out + out_length, text, length);
    out_length += length;
}

/* Copies the value of "id" (a number or a string, with its quotes) into id; 0 if there is none. */
static size_t find_id(const char *line, size_t length, char *id, size_t capacity) {
    const char *key = memmem(line, length, "\"id\":", 5);
    if (!key) return 0;
    const char *start = key + 5;
    const char *end = start;
    const char *limit = line + length;
    if (end < limit && *end == '"') {
        end++;
        while (end < limit && *end != '"') end++;
        if (end < limit) end++;
    } else {
        while (end < limit && ((*end >= '0' && *end <= '9') || *end == '-')) end++;
    }
    size_t size = (size_t)(end - start);
    if (size == 0 || size >= capacity) return 0;
    memcpy(id, start, size);
    return size;
}

static void answer(const char *line, size_t length) {
    char id[64];
    size_t id_length = find_id(line, length, id, sizeof id);
    if (id_length == 0 || !memmem(line, length, "\"method\":", 9)) return; /* a notification or a response */
    append("{\"jsonrpc\":\"2.0\",\"id\":", 22);
    append(id, id_length);
    if (memmem(line, length, "\"method\":\"initialize\"", 21)) {
        static const char result[] =
            ",\"result\":{\"protocolVersion\":1,\"plugin\":{\"name\":\"c-plugin\",\"version\":\"1.0.0\"},"
            "\"coordinators\":[{\"type\":\"c\",\"kind\":\"stack\",\"initialRoute\":\"home\","
            "\"routes\":[{\"name\":\"home\",\"transition\":\"root\"}]}]}}\n";
        append(result, sizeof result - 1);
    } else {
        append(",\"result\":{}}\n", 14);
    }
}

int main(void) {
    static char buffer[1 << 16];
    size_t filled = 0;
    for (;;) {
        ssize_t count = read(0, buffer + filled, sizeof buffer - filled);
        if (count <= 0) return 0;
        filled += (size_t)count;
        size_t start = 0;
        for (size_t i = 0; i < filled; i++) {
            if (buffer[i] != '\n') continue;
            answer(buffer + start, i - start);
            start = i + 1;
        }
        memmove(buffer, buffer + start, filled - start);
        filled -= start;
        if (filled == sizeof buffer) filled = 0; /* a line longer than the buffer: dropped */
        flush_out();
    }
}
