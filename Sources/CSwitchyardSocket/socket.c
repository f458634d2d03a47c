#define _GNU_SOURCE
#include "CSwitchyardSocket.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int switchyard_socket_connect(const char *path) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length >= sizeof(address.sun_path)) return -ENAMETOOLONG;
    memcpy(address.sun_path, path, length + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    while (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        if (errno == EINTR) continue;
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int switchyard_socket_peer(int fd, unsigned int *uid, int *pid) {
    struct ucred cred;
    socklen_t length = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return -errno;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}

unsigned int switchyard_socket_euid(void) { return geteuid(); }

int switchyard_socket_send_all(int fd, const unsigned char *bytes, size_t count) {
    size_t offset = 0;
    while (offset < count) {
        ssize_t written = send(fd, bytes + offset, count - offset, MSG_NOSIGNAL);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        offset += (size_t)written;
    }
    return 0;
}

int switchyard_socket_wait(int fd, int wake_fd, int timeout_ms) {
    struct pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
    int ready;
    do { ready = poll(fds, wake_fd >= 0 ? 2 : 1, timeout_ms); } while (ready < 0 && errno == EINTR);
    if (ready < 0) return -errno;
    if (ready == 0) return 0;
    // POLLHUP and POLLERR count as readable: the recv that follows reports them.
    int mask = 0;
    if (fds[0].revents) mask |= 1;
    if (wake_fd >= 0 && fds[1].revents) mask |= 2;
    return mask;
}

long switchyard_socket_recv(int fd, unsigned char *buffer, size_t capacity) {
    while (1) {
        ssize_t count = recv(fd, buffer, capacity, 0);
        if (count >= 0) return (long)count;
        if (errno != EINTR) return -errno;
    }
}

int switchyard_socket_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0 ? 0 : -errno; }

void switchyard_socket_poke(int fd) {
    unsigned char byte = 1;
    ssize_t ignored = write(fd, &byte, 1);
    (void)ignored;
}

void switchyard_socket_drain(int fd) {
    unsigned char buffer[64];
    while (read(fd, buffer, sizeof(buffer)) > 0) {}
}

void switchyard_socket_shutdown(int fd) { shutdown(fd, SHUT_RDWR); }

void switchyard_socket_close(int fd) { close(fd); }

// The errors a client socket meets; libuv's names and messages (uv-common.h's UV_ERRNO_MAP), so texts stay as they
// were. Anything else falls back to strerror.
static const struct { int code; const char *name; const char *message; } known[] = {
    {EACCES, "EACCES", "permission denied"},
    {EAGAIN, "EAGAIN", "resource temporarily unavailable"},
    {EBADF, "EBADF", "bad file descriptor"},
    {ECONNREFUSED, "ECONNREFUSED", "connection refused"},
    {ECONNRESET, "ECONNRESET", "connection reset by peer"},
    {EINVAL, "EINVAL", "invalid argument"},
    {EMFILE, "EMFILE", "too many open files"},
    {ENAMETOOLONG, "ENAMETOOLONG", "name too long"},
    {ENFILE, "ENFILE", "file table overflow"},
    {ENOENT, "ENOENT", "no such file or directory"},
    {ENOMEM, "ENOMEM", "not enough memory"},
    {ENOTDIR, "ENOTDIR", "not a directory"},
    {ENOTSOCK, "ENOTSOCK", "socket operation on non-socket"},
    {EPERM, "EPERM", "operation not permitted"},
    {EPIPE, "EPIPE", "broken pipe"},
    {EPROTOTYPE, "EPROTOTYPE", "protocol wrong type for socket"},
    {ETIMEDOUT, "ETIMEDOUT", "connection timed out"},
};

const char *switchyard_socket_error_name(int error) {
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (known[i].code == error) return known[i].name;
    return "UNKNOWN";
}

const char *switchyard_socket_error_message(int error) {
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (known[i].code == error) return known[i].message;
    return strerror(error);
}

int switchyard_socket_user_name(unsigned int uid, char *buffer, size_t capacity) {
    struct passwd entry;
    struct passwd *found = NULL;
    char scratch[4096];
    if (getpwuid_r(uid, &entry, scratch, sizeof(scratch), &found) != 0 || found == NULL || entry.pw_name == NULL)
        return -1;
    size_t length = strlen(entry.pw_name);
    if (length >= capacity) return -1;
    memcpy(buffer, entry.pw_name, length + 1);
    return 0;
}
