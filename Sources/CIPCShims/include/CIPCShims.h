#ifndef RTCS_IPC_SHIMS_H
#define RTCS_IPC_SHIMS_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// Why this exists: the IPC source needs memfd_create, file seals and SO_PEERCRED (GNU
// extensions the Swift Glibc module does not expose) and sendmsg/recvmsg with SCM_RIGHTS, whose
// control messages are built with the CMSG_* function-like macros Swift cannot call. Each
// wrapper does one system call's worth of work and reports failure through errno.

/// Most descriptors one received message may carry before the rest are refused.
#define RTCS_IPC_MAX_FDS 4

/// Bits of `*flags` from rtcs_ipc_receive.
#define RTCS_IPC_DATA_TRUNCATED 1    ///< the message was longer than the buffer (rest discarded)
#define RTCS_IPC_CONTROL_TRUNCATED 2 ///< more descriptors came than fit (the kernel closed the extra)

/// A memfd (close-on-exec, sealable) named `name`. Returns the descriptor, or -1 with errno.
int rtcs_ipc_memfd_create(const char *name);

/// Seals the file against shrinking and growing. 0, or -1 with errno.
int rtcs_ipc_seal_size(int fd);

/// Accepts a waiting connection as a non-blocking, close-on-exec socket (accept4). Returns the
/// descriptor, or -1 with errno (EAGAIN: none waiting).
int rtcs_ipc_accept(int listener);

/// The process id of the peer of a connected Unix socket, or -1.
int rtcs_ipc_peer_pid(int fd);

/// Sends one message of `len` bytes without blocking and without SIGPIPE, passing descriptor
/// `pass_fd` with it (SCM_RIGHTS) if it is >= 0. Returns the bytes sent, or -1 with errno
/// (EAGAIN: the peer's queue is full; EPIPE/ECONNRESET: it is gone).
ssize_t rtcs_ipc_send(int fd, const void *buf, size_t len, int pass_fd);

/// Receives one message without blocking into `buf`. Descriptors that came with it (close-on-exec)
/// are stored in fds[0 ..< *fd_count] (at most max_fds, which is at most RTCS_IPC_MAX_FDS; any
/// beyond are closed here); the caller owns them. Returns the message's bytes (0: end of
/// stream), or -1 with errno (EAGAIN: nothing waiting). `*flags` gets RTCS_IPC_* bits.
ssize_t rtcs_ipc_receive(int fd, void *buf, size_t len, int *fds, int max_fds, int *fd_count,
                         int *flags);

#ifdef __cplusplus
}
#endif
#endif
