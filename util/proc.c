/* proc.c - children that die with their parent. */
#include "util/proc.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

void proc_die_with_parent(pid_t parent)
{
	/* The death signal follows the thread that forked: memgate forks from its main thread. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
}
