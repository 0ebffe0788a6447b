// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-CPU sample rings.
 *
 * Each CPU's producers -- the overflow handler, which may run in NMI
 * context, and the scheduler probes (sched.c) -- write its ring one at a
 * time (a producer that interrupts another drops its record), so
 * producing takes no lock and never allocates: it reserves the slot at
 * head, fills it and publishes head with a release store.  A full ring
 * drops the new record and counts it.  The single consumer is read(),
 * serialised by the session's read_lock, or a reader that mapped the
 * ring (the protocol is in the uapi header); it publishes tail with a
 * release store, which frees the slots for the producers.
 * head and tail count records since configure, so head - tail is what is
 * queued and tail is what was delivered.
 *
 * A mapped control page is writable by its reader, so the module reads
 * only tail from it: head is the producer's own, copied out to the page.
 * A tail out of [head - capacity, head] makes the producers drop records
 * as if the ring were full, and counts as nothing queued; read() takes
 * such a ring back from head.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/percpu.h>
#include <linux/uaccess.h>
#include <linux/log2.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <linux/sched/signal.h>
#include <linux/moduleparam.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include "tailor.h"

/*
 * Rings are pinned kernel memory that a user asks for: like perf's
 * mmap()ed buffers (perf_event_mlock_kb, counted in user->perf_mlock),
 * they are counted per user across all of the user's sessions, here in
 * tailor's own count (charging user->locked_vm would eat io_uring's and
 * mlock's RLIMIT_MEMLOCK), and refused past an allowance per possible
 * CPU plus RLIMIT_MEMLOCK, unless the caller has CAP_IPC_LOCK or
 * CAP_PERFMON.  Their pages are also charged to the caller's memory
 * cgroup.
 */
static unsigned int user_ring_kb = 8192;
module_param(user_ring_kb, uint, 0644);
MODULE_PARM_DESC(user_ring_kb,
		 "KiB of ring memory per possible CPU one user may hold across sessions without CAP_IPC_LOCK or CAP_PERFMON, beyond RLIMIT_MEMLOCK (default 8192); rings exist for the CPUs online at configure and those that come up later");

static DEFINE_MUTEX(charge_lock);
static DEFINE_XARRAY(charged_pages);	/* uid -> xa_mk_value(pages) */

static unsigned long charged_to(kuid_t uid)
{
	void *entry = xa_load(&charged_pages, __kuid_val(uid));

	return entry ? xa_to_value(entry) : 0;
}

/* Counts @pages more for the rings' user, within the allowance it had. */
static int charge_user(struct tailor_rings *rings, unsigned long pages)
{
	unsigned long total;
	int err = 0;

	mutex_lock(&charge_lock);
	total = charged_to(rings->uid) + pages;
	if (total > rings->allowance && !rings->unlimited)
		err = -EPERM;
	if (!err)
		err = xa_err(xa_store(&charged_pages, __kuid_val(rings->uid),
				      xa_mk_value(total), GFP_KERNEL));
	mutex_unlock(&charge_lock);
	if (!err)
		rings->charged += pages;
	return err;
}

static void uncharge_user(struct tailor_rings *rings, unsigned long pages)
{
	unsigned long left;

	if (!pages)
		return;
	mutex_lock(&charge_lock);
	left = charged_to(rings->uid) - pages;
	if (left)
		xa_store(&charged_pages, __kuid_val(rings->uid), xa_mk_value(left),
			 GFP_KERNEL);
	else
		xa_erase(&charged_pages, __kuid_val(rings->uid));
	mutex_unlock(&charge_lock);
	rings->charged -= pages;
}

/*
 * One CPU's area: zeroed pages from the CPU's node, charged to the
 * configurer's memory cgroup (vmalloc_user() takes no GFP flags, and a
 * CPU brought up later gets its ring from the hotplug thread), mapped
 * into the kernel with VM_USERMAP, which remap_vmalloc_range() wants.
 * Every page is present before the NMI handler touches it.  Returns the
 * mapping, or NULL.
 */
static void *area_alloc(struct tailor_rings *rings, struct tailor_ring *ring,
			int cpu)
{
	unsigned long i, nr = rings->map_bytes >> PAGE_SHIFT;
	struct mem_cgroup *old = set_active_memcg(rings->memcg);
	void *area = NULL;

	ring->pages = kvcalloc(nr, sizeof(*ring->pages), GFP_KERNEL_ACCOUNT);
	if (!ring->pages)
		goto out;
	for (i = 0; i < nr; i++) {
		ring->pages[i] = alloc_pages_node(cpu_to_node(cpu),
						  GFP_KERNEL_ACCOUNT | __GFP_ZERO |
						  __GFP_NOWARN, 0);
		if (!ring->pages[i])
			goto out;
	}
	area = vmap(ring->pages, nr, VM_MAP | VM_USERMAP, PAGE_KERNEL);
out:
	set_active_memcg(old);
	return area;
}

static void area_free(struct tailor_ring *ring, u64 bytes)
{
	unsigned long i, nr = bytes >> PAGE_SHIFT;

	if (ring->ctl)
		vunmap(ring->ctl);
	ring->ctl = NULL;
	if (!ring->pages)
		return;
	for (i = 0; i < nr && ring->pages[i]; i++)
		__free_page(ring->pages[i]);
	kvfree(ring->pages);
	ring->pages = NULL;
}

/*
 * @cpu's ring, if it has none: charged, allocated, then published (the
 * producers and readers on other CPUs see a ring whole or not at all).
 * Caller holds the session's rings_lock, or owns @rings alone.
 */
static int ring_add(struct tailor_rings *rings, int cpu)
{
	struct tailor_ring *ring = per_cpu_ptr(rings->cpu, cpu);
	unsigned long pages = rings->map_bytes >> PAGE_SHIFT;
	struct tailor_ring_control *ctl;
	int err;

	if (ring->ctl)
		return 0;
	err = charge_user(rings, pages);
	if (err)
		return err;
	ctl = area_alloc(rings, ring, cpu);
	if (!ctl) {
		area_free(ring, rings->map_bytes);
		uncharge_user(rings, pages);
		return -ENOMEM;
	}
	ring->buf = (u8 *)ctl + TAILOR_RING_DATA_OFFSET;
	ctl->data_offset = TAILOR_RING_DATA_OFFSET;
	ctl->record_size = rings->record_size;
	ctl->capacity = rings->capacity;
	/* Pairs with the acquires of ctl in ring_ctl(). */
	smp_store_release(&ring->ctl, ctl);
	return 0;
}

/* @ring's control page, or NULL for a CPU that has no ring. */
static struct tailor_ring_control *ring_ctl(struct tailor_ring *ring)
{
	/* Pairs with the release in ring_add(): the ring is whole. */
	return smp_load_acquire(&ring->ctl);
}

/* The layout the uapi header promises, and room for it in one page. */
static_assert(offsetof(struct tailor_ring_control, tail) == 64);
static_assert(sizeof(struct tailor_ring_control) <= TAILOR_RING_DATA_OFFSET);

int tailor_rings_alloc(struct tailor_rings *rings, u32 capacity,
		       u32 record_size, u32 wakeup, bool all_possible)
{
	int cpu, err;

	/* The default holds 32768 records or 2 MiB, whichever is less (stacks are big). */
	if (!capacity)
		capacity = min_t(u64, TAILOR_DEFAULT_RING_RECORDS,
				 rounddown_pow_of_two(TAILOR_UNPRIV_RING_BYTES / record_size));
	if (capacity < 2 || capacity > TAILOR_MAX_RING_RECORDS)
		return -EINVAL;
	capacity = roundup_pow_of_two(capacity);
	if ((u64)capacity * record_size > TAILOR_MAX_RING_BYTES)
		return -EINVAL;
	/* Like perf_event_mlock_kb: unprivileged callers get small rings. */
	if ((u64)capacity * record_size > TAILOR_UNPRIV_RING_BYTES &&
	    !perfmon_capable())
		return -EPERM;
	if (!wakeup)
		wakeup = capacity / 4;
	if (wakeup > capacity)
		return -EINVAL;

	rings->map_bytes = TAILOR_RING_DATA_OFFSET +
			   PAGE_ALIGN((u64)capacity * record_size);
	rings->capacity = capacity;
	rings->record_size = record_size;
	rings->wakeup = wakeup;
	/*
	 * Who pays, decided now for every ring of the session, also those
	 * of CPUs that come up later (tailor_rings_add_cpu()), which the
	 * hotplug thread allocates: the caller's user, allowance and memory
	 * cgroup.  Not audited: most callers stay within the allowance.
	 */
	rings->uid = current_uid();
	rings->allowance = ((unsigned long)READ_ONCE(user_ring_kb) >> (PAGE_SHIFT - 10)) *
			   num_possible_cpus() + (rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT);
	rings->unlimited = ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK) ||
			   ns_capable_noaudit(&init_user_ns, CAP_PERFMON) ||
			   ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	rings->memcg = get_mem_cgroup_from_mm(current->mm);
	rings->cpu = alloc_percpu(struct tailor_ring);
	if (!rings->cpu) {
		tailor_rings_free(rings);
		return -ENOMEM;
	}
	/*
	 * A CPU that comes up after this gets its ring from the session.
	 * Clients before ABI 8 map every possible CPU's.
	 */
	for_each_cpu(cpu, all_possible ? cpu_possible_mask : cpu_online_mask) {
		err = ring_add(rings, cpu);
		if (err) {
			tailor_rings_free(rings);
			return err;
		}
	}
	return 0;
}

/*
 * A ring for @cpu, come online after the rings were allocated; caller
 * holds the session's rings_lock.  Failure (the user's allowance spent,
 * no memory) is said, not returned: the CPU comes up regardless, and
 * what the session samples there is counted lost.
 */
void tailor_rings_add_cpu(struct tailor_rings *rings, int cpu)
{
	int err;

	if (!rings->cpu)
		return;
	err = ring_add(rings, cpu);
	if (err)
		pr_info_ratelimited("no ring on CPU %d for a session of uid %u (error %d): its samples there are lost\n",
				    cpu, from_kuid(&init_user_ns, rings->uid), err);
}

void tailor_rings_free(struct tailor_rings *rings)
{
	int cpu;

	if (rings->cpu) {
		for_each_possible_cpu(cpu)
			area_free(per_cpu_ptr(rings->cpu, cpu), rings->map_bytes);
		free_percpu(rings->cpu);
		rings->cpu = NULL;
	}
	uncharge_user(rings, rings->charged);
	mem_cgroup_put(rings->memcg);
	rings->memcg = NULL;
}

/* What a consumer may take: head - tail, or 0 for a tail out of range. */
static u64 ring_queued(struct tailor_rings *rings, u64 head, u64 tail)
{
	return head - tail <= rings->capacity ? head - tail : 0;
}

bool tailor_rings_empty(struct tailor_rings *rings)
{
	int cpu;

	if (!rings->cpu)
		return true;
	for_each_possible_cpu(cpu) {
		struct tailor_ring *ring = per_cpu_ptr(rings->cpu, cpu);
		struct tailor_ring_control *ctl = ring_ctl(ring);

		/* Pairs with the release of head in tailor_ring_end(). */
		if (ctl && ring_queued(rings, smp_load_acquire(&ring->head),
				       READ_ONCE(ctl->tail)))
			return false;
	}
	return true;
}

/*
 * The slot for the next record, or NULL (and counted) if full or if this
 * CPU has no ring (it came up and its ring could not be had).
 */
static u64 *ring_reserve(struct tailor_rings *rings, struct tailor_ring *ring)
{
	struct tailor_ring_control *ctl = ring_ctl(ring);
	u64 head = ring->head;

	/*
	 * Pairs with the consumer's release of tail: its reads of the slots
	 * are done before the producer reuses them.  A tail ahead of head
	 * makes this look full too.
	 */
	if (!ctl || head - smp_load_acquire(&ctl->tail) >= rings->capacity) {
		this_cpu_inc(rings->cpu->lost);
		return NULL;
	}
	return (u64 *)(ring->buf +
		       (size_t)(head & (rings->capacity - 1)) * rings->record_size);
}

/*
 * Producer, on this CPU, from the overflow handler (NMI or hardirq) or a
 * scheduler probe (interrupts or preemption off): count a record and take
 * the slot for it, or NULL if the ring is full or another producer of
 * this session on this CPU was interrupted by this one, whose record is
 * then lost.  Every call is paired with tailor_ring_end().
 */
u64 *tailor_ring_begin(struct tailor_rings *rings, struct tailor_ring **ringp)
{
	struct tailor_ring *ring = this_cpu_ptr(rings->cpu);

	*ringp = ring;
	/*
	 * Single instructions, so a producer that interrupts this one (an
	 * NMI, or a timer tick inside a wakeup probe, which may run with
	 * interrupts on) cannot lose an update.
	 */
	this_cpu_inc(rings->cpu->produced);
	if (this_cpu_inc_return(rings->cpu->nesting) != 1) {
		this_cpu_inc(rings->cpu->lost);
		return NULL;
	}
	return ring_reserve(rings, ring);
}

/*
 * Publish @rec (if tailor_ring_begin() gave one): true if readers should
 * be woken, which the caller defers to irq_work.
 */
bool tailor_ring_end(struct tailor_rings *rings, struct tailor_ring *ring,
		     u64 *rec)
{
	bool wake = false;

	if (rec) {
		u64 head = ring->head + 1;

		/* The record is written before read() can see it ... */
		smp_store_release(&ring->head, head);
		/* ... and before a reader of the mapping can. */
		smp_store_release(&ring->ctl->head, head);
		wake = head - READ_ONCE(ring->ctl->tail) == rings->wakeup;
	}
	/* The record is done before another producer may take the ring. */
	barrier();
	this_cpu_dec(rings->cpu->nesting);
	return wake;
}

static ssize_t ring_read(struct tailor_rings *rings, struct tailor_ring *ring,
			 char __user *buf, size_t max_records)
{
	struct tailor_ring_control *ctl = ring_ctl(ring);
	size_t rs = rings->record_size;
	size_t done = 0;
	u64 head, tail, avail;

	if (!ctl)
		return 0;
	/* Pairs with the release of head in tailor_ring_end(). */
	head = smp_load_acquire(&ring->head);
	tail = READ_ONCE(ctl->tail);

	/* A tail a mapping's reader broke: go on from head. */
	if (head - tail > rings->capacity)
		tail = head;
	avail = min_t(u64, head - tail, max_records);

	while (done < avail) {
		size_t idx = tail & (rings->capacity - 1);
		size_t chunk = min_t(size_t, avail - done, rings->capacity - idx);

		if (copy_to_user(buf + done * rs, ring->buf + idx * rs,
				 chunk * rs))
			break;
		done += chunk;
		tail += chunk;
	}
	/* Pairs with the acquire of tail in ring_reserve(). */
	smp_store_release(&ctl->tail, tail);
	if (!done && avail)
		return -EFAULT;
	return done;
}

/* Consumer: copy whole records, CPU by CPU; caller holds read_lock. */
ssize_t tailor_rings_read(struct tailor_rings *rings, char __user *buf,
			  size_t count)
{
	size_t max_records = count / rings->record_size;
	size_t done = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		ssize_t n;

		if (done == max_records)
			break;
		n = ring_read(rings, per_cpu_ptr(rings->cpu, cpu),
			      buf + done * rings->record_size,
			      max_records - done);
		if (n < 0)
			return done ? done * rings->record_size : n;
		done += n;
	}
	return done * rings->record_size;
}

/*
 * One CPU's ring into @vma, which must cover it exactly at offset
 * cpu * map_bytes.  Caller holds the session's map_lock.
 */
int tailor_rings_mmap(struct tailor_rings *rings, struct vm_area_struct *vma)
{
	unsigned long pages = rings->map_bytes >> PAGE_SHIFT;
	struct tailor_ring_control *ctl;
	unsigned long cpu;

	if (!rings->cpu)
		return -EINVAL;
	/* A private mapping would copy the page the reader writes tail to. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != rings->map_bytes ||
	    vma->vm_pgoff % pages)
		return -EINVAL;
	cpu = vma->vm_pgoff / pages;
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	ctl = ring_ctl(per_cpu_ptr(rings->cpu, cpu));
	/* Offline since the configure, and no ring yet. */
	if (!ctl)
		return -ENODEV;
	/* Also sets VM_DONTEXPAND and VM_DONTDUMP. */
	return remap_vmalloc_range(vma, ctl, 0);
}

/* @cpu's figures into @st; returns its samples dropped for a kernel IP. */
u64 tailor_rings_stats(struct tailor_rings *rings, int cpu,
		       struct tailor_cpu_stats *st)
{
	struct tailor_ring *ring = per_cpu_ptr(rings->cpu, cpu);
	struct tailor_ring_control *ctl = ring_ctl(ring);
	/* One read of each, so delivered + queued is exact once stopped. */
	u64 tail = ctl ? smp_load_acquire(&ctl->tail) : 0;
	/* Pairs with the release of head in tailor_ring_end(). */
	u64 head = smp_load_acquire(&ring->head);
	u64 queued = ring_queued(rings, head, tail);

	st->produced = READ_ONCE(ring->produced);
	st->lost = READ_ONCE(ring->lost);
	st->throttled = READ_ONCE(ring->throttled);
	st->delivered = head - queued;
	st->queued = queued;
	return READ_ONCE(ring->kernel_ip_dropped);
}
