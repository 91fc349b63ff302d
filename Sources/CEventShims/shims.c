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
