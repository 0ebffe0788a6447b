// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor.ko: sampling sessions for Tailored Profiling on /dev/tailor.
 *
 * Load-time work: measure the TSC, find out whether PEBS works, register
 * the misc device and its sysfs facts.  Everything else lives in the
 * sessions.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/miscdevice.h>
#include <linux/device.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/sysfs.h>
#include <linux/pid.h>
#include <linux/threads.h>
#include <linux/cpuhotplug.h>
#include "tailor.h"

static int open_gid = -1;
module_param(open_gid, int, 0444);
MODULE_PARM_DESC(open_gid,
		 "group (gid) whose members may open /dev/tailor; default -1: root only (mode 0600). Members then profile, user mode only, processes whose user and group ids are all theirs and that are dumpable, as perf would at perf_event_paranoid 2; this overrides a stricter perf_event_paranoid (Debian's 3) and LSM ptrace rules (AppArmor, Yama), which a module cannot consult. Lockdown is kept.");

/* In the initial namespace: a caller's own user namespace could map any gid. */
static kgid_t open_kgid = INVALID_GID;

/*
 * Mode 0600 keeps the device root's.  With open_gid the node is 0666 and
 * open() admits the group (and CAP_PERFMON), since a misc device cannot
 * own a group itself.
 */
bool tailor_open_allowed(void)
{
	if (!gid_valid(open_kgid) || perfmon_capable())
		return true;
	return in_group_p(open_kgid);
}

static ssize_t tsc_khz_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", tailor_tsc.khz_kernel);
}
static DEVICE_ATTR_RO(tsc_khz);

static ssize_t tsc_khz_measured_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tailor_tsc.khz_measured);
}
static DEVICE_ATTR_RO(tsc_khz_measured);

static ssize_t tsc_mult_shift_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u %u\n", tailor_tsc.mult, tailor_tsc.shift);
}
static DEVICE_ATTR_RO(tsc_mult_shift);

static ssize_t pebs_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", tailor_pebs_absent_reason());
}
static DEVICE_ATTR_RO(pebs);

/* Whether samples get the PEBS record's own TSC, and else why not. */
static const char *pebs_tsc_state(void)
{
	if (!TAILOR_HAVE_PEBS_TSC)
		return "not in this kernel, rdtsc in the handler";
	if (!tailor_pebs_tsc_available())
		return "kernel patched; no PEBS record TSC (format 3 on), rdtsc in the handler";
	return "kernel patched, used";
}

static ssize_t pebs_tsc_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n", pebs_tsc_state());
}
static DEVICE_ATTR_RO(pebs_tsc);

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", TAILOR_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static struct attribute *tailor_attrs[] = {
	&dev_attr_tsc_khz.attr,
	&dev_attr_tsc_khz_measured.attr,
	&dev_attr_tsc_mult_shift.attr,
	&dev_attr_pebs.attr,
	&dev_attr_pebs_tsc.attr,
	&dev_attr_abi_version.attr,
	NULL,
};
ATTRIBUTE_GROUPS(tailor);

static struct miscdevice tailor_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "tailor",
	.fops = &tailor_fops,
	.groups = tailor_groups,
	.mode = 0600,
};

static int __init tailor_init(void)
{
	int err;

	/* The packing of struct tailor_sample's who word relies on these. */
	BUILD_BUG_ON(TAILOR_WHO_PID_MASK + 1 < PID_MAX_LIMIT);
	BUILD_BUG_ON(TAILOR_WHO_CPU_MASK + 1 < CONFIG_NR_CPUS);

	tailor_tsc_calibrate();
	tailor_sampler_probe();
	tailor_sched_probe();
	if (open_gid >= 0) {
		open_kgid = make_kgid(&init_user_ns, open_gid);
		if (!gid_valid(open_kgid))
			return -EINVAL;
		tailor_misc.mode = 0666;
	}

	/* Sessions' rings for CPUs that come up (session.c). */
	err = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "tailor/rings:online",
				      tailor_session_cpu_online, NULL);
	if (err < 0)
		return err;
	tailor_cpuhp_state = err;

	err = misc_register(&tailor_misc);
	if (err) {
		cpuhp_remove_multi_state(tailor_cpuhp_state);
		return err;
	}
	pr_info("tailor: /dev/tailor ready (ABI %d); tsc_khz %u, measured %u; PEBS: %s%s; PEBS record TSC: %s\n",
		TAILOR_ABI_VERSION, tailor_tsc.khz_kernel,
		tailor_tsc.khz_measured, tailor_pebs_absent_reason(),
		tailor_pebs_available() ? "" : "; sessions use the software clock",
		pebs_tsc_state());
	return 0;
}

static void __exit tailor_exit(void)
{
	/* Sessions hold a module reference, so none is left here. */
	misc_deregister(&tailor_misc);
	cpuhp_remove_multi_state(tailor_cpuhp_state);
}

module_init(tailor_init);
module_exit(tailor_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tailor: PEBS and software-clock sampling sessions for Tailored Profiling");
MODULE_AUTHOR("The tailor developers");
