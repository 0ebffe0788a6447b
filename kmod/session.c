// SPDX-License-Identifier: GPL-2.0-only
/*
 * /dev/tailor sessions: one per open file.  The ioctls move a session
 * through NEW -> CONFIGURED -> RUNNING -> STOPPED (and back to RUNNING or
 * CONFIGURED); read() and poll() drain its rings, or the reader maps them
 * with mmap() and drains them in place.  A periodic tick notices
 * a target that has exited, releases the counters, and wakes readers when
 * samples arrive too slowly to reach the wakeup mark.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include "tailor.h"

#define TAILOR_TICK	(HZ / 10)

static void wake_readers(struct irq_work *work)
{
	struct tailor_session *s = container_of(work, struct tailor_session,
						wakeup);

	wake_up_interruptible(&s->readers);
}

/*
 * Caller holds s->lock.  The state changes only once no counter is left,
 * so a reader that saw "not running" before draining has seen it all.
 */
static void stop_counters(struct tailor_session *s)
{
	tailor_sched_stop(s);
	tailor_sampler_stop(s);
	/* Pairs with the acquire in tailor_read(). */
	smp_store_release(&s->state, TAILOR_STATE_STOPPED);
	wake_up_interruptible(&s->readers);
}

static void session_tick(struct work_struct *work)
{
	struct tailor_session *s = container_of(to_delayed_work(work),
						struct tailor_session, tick);

	/* stop and release hold the lock while they cancel this work. */
	if (!mutex_trylock(&s->lock)) {
		schedule_delayed_work(&s->tick, TAILOR_TICK);
		return;
	}
	if (s->state != TAILOR_STATE_RUNNING)
		goto out;
	if (!tailor_target_alive(s)) {
		s->target_exited = true;
		stop_counters(s);
		goto out;
	}
	/*
	 * A thread whose creation raced with start may have got no counter
	 * (it inherits only from a parent that already had one): a thread
	 * the session has not met is looked at (most inherited one).  An
	 * exec that made the target unprofilable ends the session.
	 */
	if (s->plan.target) {
		tailor_sampler_forget_exited(s);
		if (tailor_sampler_attach_new(s, tailor_sampler_has_unknown(s)) < 0) {
			s->target_exited = !tailor_target_alive(s);
			stop_counters(s);
			goto out;
		}
	}
	if (!tailor_rings_empty(&s->rings))
		wake_up_interruptible(&s->readers);
	schedule_delayed_work(&s->tick, TAILOR_TICK);
out:
	mutex_unlock(&s->lock);
}

/* The hotplug state of the sessions' rings (main.c sets it up). */
int tailor_cpuhp_state;

static int tailor_open(struct inode *inode, struct file *file)
{
	struct tailor_session *s;
	int err;

	if (!tailor_open_allowed())
		return -EACCES;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	mutex_init(&s->lock);
	mutex_init(&s->read_lock);
	mutex_init(&s->map_lock);
	mutex_init(&s->rings_lock);
	atomic_set(&s->mappings, 0);
	init_waitqueue_head(&s->readers);
	init_irq_work(&s->wakeup, wake_readers);
	INIT_LIST_HEAD(&s->sched_node);
	xa_init(&s->tasks);
	INIT_DELAYED_WORK(&s->tick, session_tick);
	s->state = TAILOR_STATE_NEW;
	err = cpuhp_state_add_instance_nocalls(tailor_cpuhp_state, &s->cpuhp_node);
	if (err) {
		kfree(s);
		return err;
	}
	file->private_data = s;
	return stream_open(inode, file);
}

/*
 * Hotplug: @cpu came up.  A configured session gets a ring there, so
 * that what it samples on @cpu is kept (its counters follow their tasks
 * there by themselves).  Never fails: the CPU comes up regardless.
 */
int tailor_session_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct tailor_session *s = hlist_entry(node, struct tailor_session,
					       cpuhp_node);

	mutex_lock(&s->rings_lock);
	tailor_rings_add_cpu(&s->rings, cpu);
	mutex_unlock(&s->rings_lock);
	return 0;
}

static int tailor_release(struct inode *inode, struct file *file)
{
	struct tailor_session *s = file->private_data;

	mutex_lock(&s->lock);
	if (s->state == TAILOR_STATE_RUNNING)
		stop_counters(s);
	cancel_delayed_work_sync(&s->tick);
	mutex_unlock(&s->lock);

	/* Waits for a hotplug callback that may be at the rings. */
	cpuhp_state_remove_instance_nocalls(tailor_cpuhp_state, &s->cpuhp_node);
	tailor_rings_free(&s->rings);
	tailor_plan_release(&s->plan);
	kfree(s->events);
	xa_destroy(&s->tasks);
	mutex_destroy(&s->rings_lock);
	mutex_destroy(&s->map_lock);
	mutex_destroy(&s->read_lock);
	mutex_destroy(&s->lock);
	kfree(s);
	return 0;
}

/*
 * The uapi header's rule for a struct that starts with its __u32 size:
 * @ksize bytes at @k from the caller's @usize (read from @u), at least
 * @ver0 and at most a page; zero-extended if smaller, and if larger, its
 * bytes past @ksize zero (else -E2BIG).  Returns the size both know,
 * which the reply is cut to, or an error.
 */
static int copy_struct_in(void *k, size_t ksize, size_t ver0,
			  const void __user *u)
{
	u32 usize;
	int err;

	if (get_user(usize, (const u32 __user *)u))
		return -EFAULT;
	if (usize < ver0 || usize > PAGE_SIZE)
		return -EINVAL;
	err = copy_struct_from_user(k, ksize, u, usize);
	if (err)
		return err;
	*(u32 *)k = min_t(u32, usize, ksize);
	return *(u32 *)k;
}

static long ioctl_configure(struct tailor_session *s,
			    struct tailor_config __user *ucfg)
{
	struct tailor_config cfg;
	struct tailor_plan plan;
	struct tailor_rings rings = {};
	int size, err, cpu;

	size = copy_struct_in(&cfg, sizeof(cfg), TAILOR_CONFIG_SIZE_VER0, ucfg);
	if (size < 0)
		return size;

	mutex_lock(&s->lock);
	if (s->state == TAILOR_STATE_RUNNING) {
		err = -EBUSY;
		goto out;
	}
	err = tailor_plan_build(&plan, &cfg);
	if (err)
		goto out_plan;
	err = tailor_rings_alloc(&rings, cfg.ring_records, cfg.record_size,
				 cfg.wakeup_records, cfg.abi_version < 8);
	if (err)
		goto out_plan;
	/* Out fields since ABI 4; earlier clients keep their zeros. */
	if (cfg.abi_version >= 4) {
		cfg.ring_mmap_bytes = rings.map_bytes;
		cfg.ring_capacity = rings.capacity;
	}
	if (copy_to_user(ucfg, &cfg, size)) {
		err = -EFAULT;
		goto out_rings;
	}

	/*
	 * Commit: the old plan and rings go, readers see the new ones.  Not
	 * while the old rings are mapped: their reader would drain rings
	 * nothing fills any more.
	 */
	mutex_lock(&s->read_lock);
	mutex_lock(&s->rings_lock);
	mutex_lock(&s->map_lock);
	if (atomic_read(&s->mappings)) {
		err = -EBUSY;
	} else {
		swap(s->rings, rings);
		swap(s->plan, plan);
	}
	mutex_unlock(&s->map_lock);
	mutex_unlock(&s->rings_lock);
	mutex_unlock(&s->read_lock);
	if (err)
		goto out_rings;
	/*
	 * A CPU that came up since the rings were allocated found the old
	 * ones, or none: it gets its ring now.
	 */
	cpus_read_lock();
	mutex_lock(&s->rings_lock);
	for_each_online_cpu(cpu)
		tailor_rings_add_cpu(&s->rings, cpu);
	mutex_unlock(&s->rings_lock);
	cpus_read_unlock();
	s->target_exited = false;
	WRITE_ONCE(s->state, TAILOR_STATE_CONFIGURED);
out_rings:
	tailor_rings_free(&rings);
out_plan:
	tailor_plan_release(&plan);
out:
	mutex_unlock(&s->lock);
	return err;
}

static long ioctl_start(struct tailor_session *s)
{
	int err = 0;

	mutex_lock(&s->lock);
	switch (s->state) {
	case TAILOR_STATE_NEW:
		err = -EINVAL;
		break;
	case TAILOR_STATE_RUNNING:
		err = -EBUSY;
		break;
	default:
		if (s->target_exited) {
			err = -ESRCH;
			break;
		}
		err = tailor_sampler_start(s);
		if (err)
			break;
		err = tailor_sched_start(s);
		if (err) {
			tailor_sampler_stop(s);
			break;
		}
		WRITE_ONCE(s->state, TAILOR_STATE_RUNNING);
		schedule_delayed_work(&s->tick, TAILOR_TICK);
	}
	mutex_unlock(&s->lock);
	return err;
}

static long ioctl_stop(struct tailor_session *s)
{
	int err = 0;

	mutex_lock(&s->lock);
	if (s->state == TAILOR_STATE_RUNNING) {
		stop_counters(s);
		cancel_delayed_work_sync(&s->tick);
	} else if (s->state != TAILOR_STATE_STOPPED) {
		err = -EINVAL;
	}
	mutex_unlock(&s->lock);
	return err;
}

/*
 * The figures are taken under s->lock into a copy and copied out after:
 * a copy_to_user() that faults (on a page userfaultfd holds, or FUSE
 * backs) must not stall every other ioctl, poll() and the tick.
 */
static long ioctl_stats(struct tailor_session *s,
			struct tailor_stats __user *ust)
{
	struct tailor_cpu_stats __user *ucpus;
	struct tailor_cpu_stats *cpus = NULL;
	struct tailor_stats st;
	unsigned int n = 0;
	int cpu, size, err = 0;

	size = copy_struct_in(&st, sizeof(st), TAILOR_STATS_SIZE_VER0, ust);
	if (size < 0)
		return size;
	ucpus = u64_to_user_ptr(st.cpus);
	if (ucpus && st.nr_cpus) {
		n = min_t(u32, st.nr_cpus, nr_cpu_ids);
		cpus = kvcalloc(n, sizeof(*cpus), GFP_KERNEL);
		if (!cpus)
			return -ENOMEM;
	}

	mutex_lock(&s->lock);
	memset(&st.total, 0, sizeof(st.total));
	st.kernel_ip_dropped = 0;
	for_each_possible_cpu(cpu) {
		struct tailor_cpu_stats c = {};

		if (s->rings.cpu)
			st.kernel_ip_dropped += tailor_rings_stats(&s->rings, cpu, &c);
		st.total.produced += c.produced;
		st.total.delivered += c.delivered;
		st.total.lost += c.lost;
		st.total.queued += c.queued;
		st.total.throttled += c.throttled;
		if (cpu < n)
			cpus[cpu] = c;
	}
	st.running = s->state == TAILOR_STATE_RUNNING;
	st.target_exited = s->target_exited;
	st.nr_counters = s->nr_events;
	st.reserved = 0;
	mutex_unlock(&s->lock);

	/* Entries for CPUs that are not possible stay zero, as before. */
	st.nr_cpus = 0;
	if (n) {
		for (cpu = n - 1; cpu >= 0 && !cpu_possible(cpu); cpu--)
			;
		st.nr_cpus = cpu + 1;
		if (copy_to_user(ucpus, cpus, st.nr_cpus * sizeof(*cpus)))
			err = -EFAULT;
	}
	kvfree(cpus);
	if (!err && copy_to_user(ust, &st, size))
		err = -EFAULT;
	return err;
}

void tailor_fill_info(struct tailor_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	BUILD_BUG_ON(sizeof(struct tailor_config) < TAILOR_CONFIG_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct tailor_stats) < TAILOR_STATS_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct tailor_info) < TAILOR_INFO_SIZE_VER0);
	info->abi_version = TAILOR_ABI_VERSION;
	info->tsc_khz = tailor_tsc.khz_kernel;
	info->tsc_khz_measured = tailor_tsc.khz_measured;
	info->tsc_mult = tailor_tsc.mult;
	info->tsc_shift = tailor_tsc.shift;
	info->nr_cpu_ids = nr_cpu_ids;
	info->caps |= TAILOR_CAP_ENTRY_IP;
	if (tailor_pebs_available())
		info->caps |= TAILOR_CAP_PEBS;
	if (tailor_pebs_tsc_available())
		info->caps |= TAILOR_CAP_PEBS_TSC;
	if (tailor_tsc.stable)
		info->caps |= TAILOR_CAP_TSC_STABLE;
	if (tailor_sched_available())
		info->caps |= TAILOR_CAP_SCHED_EVENTS;
}

static long ioctl_info(struct tailor_info __user *uinfo)
{
	struct tailor_info info;
	int size;

	size = copy_struct_in(&info, sizeof(info), TAILOR_INFO_SIZE_VER0, uinfo);
	if (size < 0)
		return size;
	tailor_fill_info(&info);
	info.size = size;
	return copy_to_user(uinfo, &info, size) ? -EFAULT : 0;
}

static long tailor_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct tailor_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case TAILOR_IOC_INFO:
		return ioctl_info(uarg);
	case TAILOR_IOC_CONFIGURE:
		return ioctl_configure(s, uarg);
	case TAILOR_IOC_START:
		return ioctl_start(s);
	case TAILOR_IOC_STOP:
		return ioctl_stop(s);
	case TAILOR_IOC_STATS:
		return ioctl_stats(s, uarg);
	}
	return -ENOTTY;
}

static bool reader_may_return(struct tailor_session *s)
{
	return READ_ONCE(s->state) != TAILOR_STATE_RUNNING ||
	       !tailor_rings_empty(&s->rings);
}

/*
 * Whole records only.  Blocks while the session runs and has nothing;
 * returns 0 once it has stopped (or its target exited) and is drained.
 */
static ssize_t tailor_read(struct file *file, char __user *buf, size_t count,
			   loff_t *ppos)
{
	struct tailor_session *s = file->private_data;
	ssize_t ret;

	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	if (!s->rings.cpu || count < s->rings.record_size) {
		ret = -EINVAL;
		goto out;
	}
	/* A mapped ring has its consumer already. */
	if (atomic_read(&s->mappings)) {
		ret = -EBUSY;
		goto out;
	}
	for (;;) {
		/* Pairs with the release in stop_counters(). */
		bool running = smp_load_acquire(&s->state) == TAILOR_STATE_RUNNING;

		ret = tailor_rings_read(&s->rings, buf, count);
		if (ret || !running)
			break;
		if (file->f_flags & O_NONBLOCK) {
			ret = -EAGAIN;
			break;
		}
		ret = wait_event_interruptible(s->readers, reader_may_return(s));
		if (ret)
			break;
	}
out:
	mutex_unlock(&s->read_lock);
	return ret;
}

static __poll_t tailor_poll(struct file *file, poll_table *wait)
{
	struct tailor_session *s = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &s->readers, wait);
	mutex_lock(&s->lock);
	if (!tailor_rings_empty(&s->rings))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (s->state == TAILOR_STATE_STOPPED)
		mask |= EPOLLHUP;
	mutex_unlock(&s->lock);
	return mask;
}

/* Counts the session's mappings, which a fork or a split duplicates. */
static void tailor_vm_open(struct vm_area_struct *vma)
{
	struct tailor_session *s = vma->vm_file->private_data;

	atomic_inc(&s->mappings);
}

static void tailor_vm_close(struct vm_area_struct *vma)
{
	struct tailor_session *s = vma->vm_file->private_data;

	atomic_dec(&s->mappings);
}

static const struct vm_operations_struct tailor_vm_ops = {
	.open = tailor_vm_open,
	.close = tailor_vm_close,
};

/*
 * Called under mmap_lock, so not s->lock: ioctls hold that across
 * copy_to_user(), which may fault and take mmap_lock.  The mapping holds
 * the file, so the session outlives it.
 *
 * A ring has one consumer: while a read() is under way (it holds
 * read_lock, possibly asleep waiting for samples) the rings cannot be
 * mapped, and once mapped read() refuses.  read() takes mmap_lock under
 * read_lock when it faults, so here read_lock is only tried, never waited
 * for.
 */
static int tailor_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct tailor_session *s = file->private_data;
	int err;

	if (!mutex_trylock(&s->read_lock))
		return -EBUSY;
	mutex_lock(&s->map_lock);
	err = tailor_rings_mmap(&s->rings, vma);
	if (!err) {
		vma->vm_ops = &tailor_vm_ops;
		atomic_inc(&s->mappings);
	}
	mutex_unlock(&s->map_lock);
	mutex_unlock(&s->read_lock);
	return err;
}

const struct file_operations tailor_fops = {
	.owner = THIS_MODULE,
	.open = tailor_open,
	.release = tailor_release,
	.read = tailor_read,
	.poll = tailor_poll,
	.mmap = tailor_mmap,
	.unlocked_ioctl = tailor_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};
