/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench-launch.h: the bench programs that run a COMMAND under counters
 * (clock-floor.c, sideband-sink.c) fork it first and let it exec only
 * once the counters are open on its pid, so that enable_on_exec starts
 * them with the command and not before.
 */
#ifndef TAILOR_BENCH_LAUNCH_H
#define TAILOR_BENCH_LAUNCH_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * Fork a child that waits for a byte on a pipe, then execs @argv; *@go_fd
 * is the pipe's end to write it to.  The child's pid, or -1 (reported
 * with @prog's name).  EOF instead of the byte: the child exits 127.
 */
static inline pid_t bench_launch_waiting(const char *prog, char **argv, int *go_fd)
{
	int go[2];
	char c;
	pid_t pid;

	if (pipe(go)) {
		fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		return -1;
	}
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	*go_fd = go[1];
	return pid;
}

/* Let the child of bench_launch_waiting() exec: 0, or -1 with errno. */
static inline int bench_launch_go(int go_fd)
{
	char c = 0;
	int ok = write(go_fd, &c, 1) == 1;

	close(go_fd);
	return ok ? 0 : -1;
}

#endif
