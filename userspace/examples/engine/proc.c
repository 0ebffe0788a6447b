// SPDX-License-Identifier: GPL-2.0-only
/* Running another program and waiting for it (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int proc_run(char *const argv[], const char *out, const char *err, int *status)
{
	posix_spawn_file_actions_t actions;
	pid_t pid;
	int ret;

	ret = posix_spawn_file_actions_init(&actions);
	if (ret)
		return ret;
	if (out)
		ret = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out,
						       O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
						       0644);
	if (!ret && err && out && !strcmp(out, err))
		ret = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
	else if (!ret && err)
		ret = posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err,
						       O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (!ret) {
		/* Our buffered output first, before the child's. */
		fflush(stdout);
		fflush(stderr);
		ret = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
	}
	posix_spawn_file_actions_destroy(&actions);
	if (ret)
		return ret;
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}
