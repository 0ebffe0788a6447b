// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who may profile whom.
 *
 * perf_event_create_kernel_counter() checks nothing: it trusts its
 * caller.  perf_event_open() lets a caller profile a task when it has
 * CAP_PERFMON or passes ptrace_may_access(PTRACE_MODE_READ_REALCREDS);
 * tailor refuses what perf refuses.  ptrace_may_access() is not exported
 * to modules, so its DAC, capability and dumpability rules are repeated
 * here; LSM ptrace hooks (security_ptrace_access_check(), also not
 * exported) are not consulted, which is why /dev/tailor is root-only
 * unless the administrator opens it to a trusted group.
 */
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/rcupdate.h>
#include <linux/mm_types.h>
#include "tailor.h"

static bool same_creds(const struct cred *cred, const struct cred *tcred)
{
	return uid_eq(cred->uid, tcred->euid) &&
	       uid_eq(cred->uid, tcred->suid) &&
	       uid_eq(cred->uid, tcred->uid) &&
	       gid_eq(cred->gid, tcred->egid) &&
	       gid_eq(cred->gid, tcred->sgid) &&
	       gid_eq(cred->gid, tcred->gid);
}

/*
 * @own_group: whether current's own threads pass as ptrace lets them.
 * Not for a check on behalf of the configurer made by whoever starts the
 * session (the file may have been passed on, even to the target).
 */
static bool ptrace_read_allowed(struct task_struct *task, bool own_group)
{
	const struct cred *cred = current_cred();
	struct user_namespace *mm_ns = NULL;
	bool allowed;
	struct mm_struct *mm;

	if (own_group && same_thread_group(task, current))
		return true;

	rcu_read_lock();
	allowed = same_creds(cred, __task_cred(task)) ||
		  ns_capable(__task_cred(task)->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	if (!allowed)
		return false;

	/* Dumpability is read after the credentials, as ptrace does. */
	smp_rmb();
	task_lock(task);
	mm = task->mm;
	if (mm && get_dumpable(mm) != SUID_DUMP_USER)
		mm_ns = mm->user_ns;
	allowed = !mm_ns || ns_capable(mm_ns, CAP_SYS_PTRACE);
	task_unlock(task);
	return allowed;
}

static int may_profile_locked(struct task_struct *task, bool own_group)
{
	if (perfmon_capable())
		return 0;
	return ptrace_read_allowed(task, own_group) ? 0 : -EACCES;
}

/* 0 if current may sample @task, else -EACCES (as perf_event_open()). */
int tailor_may_profile(struct task_struct *task)
{
	int ret;

	/* Hold off exec, which may change credentials, as perf does. */
	ret = down_read_interruptible(&task->signal->exec_update_lock);
	if (ret)
		return ret;
	ret = may_profile_locked(task, true);
	up_read(&task->signal->exec_update_lock);
	return ret;
}

/*
 * Counters are created long after configure, possibly by another process
 * the file was passed to, and an exec in between may have made the target
 * privileged.  So, like perf_event_open() does across its check and the
 * install, hold off exec of @task's process while the caller creates
 * counters, and check again with the credentials of whoever configured,
 * @cred: they stay in force until tailor_profile_unlock(), so that the
 * PMU driver's own checks as the counters are created (a raw event's
 * AnyThread bit wants CAP_PERFMON) see the configurer too, not whoever
 * started.  On success the caller checks each thread with
 * tailor_may_profile_thread() and must call tailor_profile_unlock()
 * with *@old.
 */
int tailor_profile_lock(struct task_struct *task, const struct cred *cred,
			const struct cred **old)
{
	int ret;

	ret = down_read_interruptible(&task->signal->exec_update_lock);
	if (ret)
		return ret;
	*old = override_creds(cred);
	ret = may_profile_locked(task, false);
	if (ret) {
		revert_creds(*old);
		up_read(&task->signal->exec_update_lock);
	}
	return ret;
}

/*
 * A thread of the locked process: its credentials may differ from its
 * leader's (setresuid(2) is per thread underneath libc).
 */
int tailor_may_profile_thread(struct task_struct *t)
{
	return may_profile_locked(t, false);
}

void tailor_profile_unlock(struct task_struct *task, const struct cred *old)
{
	revert_creds(old);
	up_read(&task->signal->exec_update_lock);
}
