#include "CEventShims.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

int rtcs_loop_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int rtcs_loop_epoll_add(int epfd, int fd, uint64_t token) {
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = token};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int rtcs_loop_epoll_remove(int epfd, int fd) {
    struct epoll_event unused = {0};
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &unused);
}

int rtcs_loop_epoll_wait(int epfd, uint64_t *tokens, int max, int timeout_ms) {
    enum { batch = 16 };
    struct epoll_event events[batch];
    if (max > batch) max = batch;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) tokens[i] = events[i].data.u64;
    return n;
}

int rtcs_loop_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int rtcs_loop_eventfd_signal(int fd) {
    uint64_t one = 1;
    // EAGAIN only when the counter is at its maximum: the waiter is woken either way.
    return write(fd, &one, sizeof one) == sizeof one || errno == EAGAIN ? 0 : -1;
}

uint64_t rtcs_loop_eventfd_drain(int fd) {
    uint64_t count = 0;
    return read(fd, &count, sizeof count) == sizeof count ? count : 0;
}

int rtcs_loop_timerfd_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int rtcs_loop_timerfd_arm(int fd, int64_t microseconds) {
    struct itimerspec spec = {0};
    if (microseconds >= 0) {
        // 0 would disarm: the earliest representable expiry stands for "already due".
        if (microseconds == 0) microseconds = 1;
        spec.it_value.tv_sec = microseconds / 1000000;
        spec.it_value.tv_nsec = (microseconds % 1000000) * 1000;
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

uint64_t rtcs_loop_timerfd_drain(int fd) {
    uint64_t count = 0;
    return read(fd, &count, sizeof count) == sizeof count ? count : 0;
}

#include <linux/errqueue.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int rtcs_udp_enable_errors(int fd) {
    int on = 1;
    struct sockaddr_storage local;
    socklen_t length = sizeof local;
    if (getsockname(fd, (struct sockaddr *)&local, &length) != 0) return -1;
    if (local.ss_family == AF_INET6) return setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &on, sizeof on);
    return setsockopt(fd, IPPROTO_IP, IP_RECVERR, &on, sizeof on);
}

int rtcs_udp_take_unreachable(int fd, void *destination, unsigned *length) {
    int found = 0;
    // Bounded: the queue holds at most what the receive buffer allows; 64 a call is plenty.
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage to;
        char control[256];
        char data[1];
        struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
        struct msghdr msg = {.msg_name = &to, .msg_namelen = sizeof to, .msg_iov = &iov, .msg_iovlen = 1,
                             .msg_control = control, .msg_controllen = sizeof control};
        if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return found;
            return found > 0 ? found : -1;
        }
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            int v4 = c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR;
            int v6 = c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR;
            if (!v4 && !v6) continue;
            const struct sock_extended_err *e = (const struct sock_extended_err *)CMSG_DATA(c);
            int icmp = e->ee_origin == SO_EE_ORIGIN_ICMP || e->ee_origin == SO_EE_ORIGIN_ICMP6;
            if (!icmp || e->ee_errno != ECONNREFUSED) continue;
            unsigned n = msg.msg_namelen < *length ? msg.msg_namelen : *length;
            memcpy(destination, &to, n);
            *length = n;
            found++;
        }
    }
    return found;
}

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

int rtcs_netlink_open_address_watch(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl local = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR};
    if (bind(fd, (struct sockaddr *)&local, sizeof local) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int rtcs_netlink_drain_address_changes(int fd) {
    int changes = 0;
    // Bounded: a burst of changes is read 64 datagrams at a time; the caller comes back.
    for (int i = 0; i < 64; i++) {
        char buffer[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct sockaddr_nl from;
        socklen_t length = sizeof from;
        ssize_t n = recvfrom(fd, buffer, sizeof buffer, MSG_DONTWAIT, (struct sockaddr *)&from, &length);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return changes;
            if (errno == ENOBUFS) return changes + 1;  // the queue overflowed: something changed
            return changes > 0 ? changes : -1;
        }
        if (from.nl_pid != 0) continue;  // only the kernel speaks for the host's addresses
        size_t left = (size_t)n;
        for (struct nlmsghdr *m = (struct nlmsghdr *)buffer; NLMSG_OK(m, left); m = NLMSG_NEXT(m, left)) {
            if (m->nlmsg_type == RTM_NEWADDR || m->nlmsg_type == RTM_DELADDR) changes++;
        }
    }
    return changes;
}
