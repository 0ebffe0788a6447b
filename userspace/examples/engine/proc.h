/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Running another program and waiting for it: the C compiler (jit.c) and
 * the profiler and tailor report (explain_analyze.c).
 */
#ifndef ENGINE_PROC_H
#define ENGINE_PROC_H

/*
 * Runs @argv (argv[0] searched on the PATH) and waits for it, through
 * EINTR.  @out, if not NULL, gets its stdout (truncated first); @err, if
 * not NULL, its stderr (appended to).  The same path for both is one open
 * file, so that neither overwrites the other.  Returns 0 with *@status as
 * waitpid() gave it, or an errno value: it could not be started.
 */
int proc_run(char *const argv[], const char *out, const char *err, int *status);

#endif /* ENGINE_PROC_H */
