#ifndef RTCS_EVENT_SHIMS_H
#define RTCS_EVENT_SHIMS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Why this exists: the event loop waits on epoll, wakes through an eventfd and keeps its
// deadline in a timerfd. Swift's Glibc module exposes none of <sys/epoll.h>,
// <sys/eventfd.h> or <sys/timerfd.h>, and `struct epoll_event` is packed on x86-64, which
// Swift cannot lay out. Each wrapper is one system call; failures are -1 with errno.

/// An epoll instance (close-on-exec).
int rtcs_loop_epoll_create(void);

/// Watches `fd` for readability; `token` comes back from rtcs_loop_epoll_wait when it is ready.
int rtcs_loop_epoll_add(int epfd, int fd, uint64_t token);

/// Stops watching `fd`.
int rtcs_loop_epoll_remove(int epfd, int fd);

/// Waits up to `timeout_ms` (-1: no limit) and writes the tokens of up to `max` ready
/// descriptors into `tokens`. Returns how many, 0 on timeout, -1 with errno (EINTR included).
int rtcs_loop_epoll_wait(int epfd, uint64_t *tokens, int max, int timeout_ms);

/// A non-blocking, close-on-exec eventfd counter starting at 0.
int rtcs_loop_eventfd_create(void);

/// Adds 1 to the counter (wakes a waiter). Safe from any thread and from a signal handler.
int rtcs_loop_eventfd_signal(int fd);

/// Reads and clears the counter; returns the count, 0 if it was already clear.
uint64_t rtcs_loop_eventfd_drain(int fd);

/// A non-blocking, close-on-exec CLOCK_MONOTONIC timerfd.
int rtcs_loop_timerfd_create(void);

/// Arms the timer to fire once at absolute CLOCK_MONOTONIC time `microseconds` (a time in
/// the past fires at once); `microseconds` < 0 disarms it.
int rtcs_loop_timerfd_arm(int fd, int64_t microseconds);

/// Reads and clears the expiry count.
uint64_t rtcs_loop_timerfd_drain(int fd);

/// Asks the kernel to queue ICMP errors for UDP socket `fd` (IP_RECVERR, and IPV6_RECVERR on an
/// IPv6 socket): an unconnected UDP socket otherwise never learns that a peer's port closed.
int rtcs_udp_enable_errors(int fd);

/// Drains `fd`'s error queue (MSG_ERRQUEUE, non-blocking). For each ICMP "port unreachable" it
/// writes the destination of the datagram that caused it into `destination` (at most
/// `*length` bytes; `*length` is set) and counts it. Returns how many were port-unreachable
/// (the last one's destination is in `destination`), 0 when none, -1 with errno.
int rtcs_udp_take_unreachable(int fd, void *destination, unsigned *length);

/// A non-blocking, close-on-exec NETLINK_ROUTE socket subscribed to the host's address changes
/// (IPv4 and IPv6 RTM_NEWADDR / RTM_DELADDR); -1 with errno.
int rtcs_netlink_open_address_watch(void);

/// Reads every message waiting on such a socket; returns how many were address changes (0:
/// none), -1 with errno when the socket failed (ENOBUFS: changes were lost, count it as one).
int rtcs_netlink_drain_address_changes(int fd);

#ifdef __cplusplus
}
#endif

#endif
