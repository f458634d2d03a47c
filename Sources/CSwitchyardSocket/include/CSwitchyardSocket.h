#ifndef CSWITCHYARD_SOCKET_H
#define CSWITCHYARD_SOCKET_H
// The few socket syscalls the control client needs, without libuv: a tool that only talks to a running host must
// build without libuv1-dev. Every function returns a negative errno on failure, so Swift never reads `errno` (a
// thread-local it cannot reach safely).

#include <errno.h>  // the E* constants, for Swift to compare codes with
#include <stddef.h>

/// A connected, close-on-exec Unix stream socket to `path`, or -errno (-ENAMETOOLONG when `path` does not fit
/// `sun_path`, instead of being cut).
int switchyard_socket_connect(const char *path);

/// The peer's credentials (`SO_PEERCRED`): 0, or -errno.
int switchyard_socket_peer(int fd, unsigned int *uid, int *pid);

/// This process's effective uid.
unsigned int switchyard_socket_euid(void);

/// Sends all `count` bytes (retrying on EINTR, no SIGPIPE): 0, or -errno.
int switchyard_socket_send_all(int fd, const unsigned char *bytes, size_t count);

/// Waits up to `timeout_ms` (-1: forever) for `fd` to be readable, or for `wake_fd` (-1: none) to be: a bit mask
/// (1: `fd`, 2: `wake_fd`), 0 on timeout, or -errno.
int switchyard_socket_wait(int fd, int wake_fd, int timeout_ms);

/// Reads what is available into `buffer` (blocking until something is): the count, 0 at end of stream, or -errno.
long switchyard_socket_recv(int fd, unsigned char *buffer, size_t capacity);

/// A close-on-exec pipe (for waking a reader blocked in `switchyard_socket_wait`): 0, or -errno.
int switchyard_socket_pipe(int fds[2]);

/// Writes one byte to `fd`, ignoring a full pipe (one pending wake-up is enough).
void switchyard_socket_poke(int fd);

/// Reads and discards whatever is in `fd` (a non-blocking wake pipe).
void switchyard_socket_drain(int fd);

/// Half-closes both directions (wakes a reader blocked on `fd`; the peer reads EOF).
void switchyard_socket_shutdown(int fd);

void switchyard_socket_close(int fd);

/// The errno's symbolic name, e.g. "ENOENT", and its description in libuv's words (so messages read as they did
/// when the client used libuv's `uv_err_name`/`uv_strerror`).
const char *switchyard_socket_error_name(int error);
const char *switchyard_socket_error_message(int error);

/// The user name of `uid` into `buffer`: 0, or -1 when there is none.
int switchyard_socket_user_name(unsigned int uid, char *buffer, size_t capacity);

#endif
