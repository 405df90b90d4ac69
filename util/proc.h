/* proc.h - what every process memgate forks does first: die with the one that forked it. */
#ifndef MG_UTIL_PROC_H
#define MG_UTIL_PROC_H

#include <sys/types.h>

/**
 * proc_die_with_parent() - in a child just forked by @parent (its getpid() before the fork):
 * be sent SIGKILL when @parent dies, SIGKILL included, so that no case, side of `ab` or QEMU
 * outlives the memgate that started it (holding the hugetlb lock and pages, or a CPU). The
 * signal survives execve(). A parent already gone before the request took hold is seen by
 * getppid(), and the child exits at once with status 127.
 */
void proc_die_with_parent(pid_t parent);

#endif
