// switchyard-echo: the benchmark's floor. Echoes stdin to stdout byte for byte, no parsing, so a round trip through
// it costs what the pipes and the scheduler cost and nothing more. Exits at EOF.
#include <unistd.h>

int main(void) {
    char buffer[65536];
    for (;;) {
        ssize_t count = read(0, buffer, sizeof buffer);
        if (count <= 0) return 0;
        ssize_t offset = 0;
        while (offset < count) {
            ssize_t written = write(1, buffer + offset, (size_t)(count - offset));
            if (written <= 0) return 0;
            offset += written;
        }
    }
}
