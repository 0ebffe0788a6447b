// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-CPU sample rings.
 *
 * Each CPU's overflow handler is the single producer of its ring and may
 * run in NMI context, so producing takes no lock and never allocates: it
 * reserves the slot at head, fills it and publishes head with a release
 * store.  A full ring drops the new sample and counts it.  read() is the
 * single consumer, serialised by the session's read_lock; it copies whole
 * records and publishes tail with a release store, which frees the slots
 * for the producer.  head and tail count records since configure, so
 * head - tail is what is queued and tail is what was delivered.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/uaccess.h>
#include <linux/log2.h>
#include <linux/capability.h>
#include "tailor.h"

int tailor_rings_alloc(struct tailor_rings *rings, u32 capacity,
		       u32 record_size, u32 wakeup)
{
	int cpu;

	if (!capacity)
		capacity = TAILOR_DEFAULT_RING_RECORDS;
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

	rings->cpu = alloc_percpu(struct tailor_ring);
	if (!rings->cpu)
		return -ENOMEM;
	rings->capacity = capacity;
	rings->record_size = record_size;
	rings->wakeup = wakeup;

	for_each_possible_cpu(cpu) {
		struct tailor_ring *ring = per_cpu_ptr(rings->cpu, cpu);

		/* Zeroed, so every page is present before NMI touches it. */
		ring->buf = kvzalloc_node((size_t)capacity * record_size,
					  GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));
		if (!ring->buf) {
			tailor_rings_free(rings);
			return -ENOMEM;
		}
	}
	return 0;
}

void tailor_rings_free(struct tailor_rings *rings)
{
	int cpu;

	if (!rings->cpu)
		return;
	for_each_possible_cpu(cpu)
		kvfree(per_cpu_ptr(rings->cpu, cpu)->buf);
	free_percpu(rings->cpu);
	rings->cpu = NULL;
}

static u64 ring_queued(struct tailor_ring *ring)
{
	/* Pairs with the release of head in tailor_ring_commit(). */
	return smp_load_acquire(&ring->head) - READ_ONCE(ring->tail);
}

bool tailor_rings_empty(struct tailor_rings *rings)
{
	int cpu;

	if (!rings->cpu)
		return true;
	for_each_possible_cpu(cpu)
		if (ring_queued(per_cpu_ptr(rings->cpu, cpu)))
			return false;
	return true;
}

/* Producer: the slot for the next record, or NULL (and counted) if full. */
u64 *tailor_ring_reserve(struct tailor_rings *rings, struct tailor_ring *ring)
{
	u64 head = ring->head;

	/* Pairs with the release of tail in ring_read(). */
	if (head - smp_load_acquire(&ring->tail) >= rings->capacity) {
		WRITE_ONCE(ring->lost, ring->lost + 1);
		return NULL;
	}
	return (u64 *)(ring->buf +
		       (size_t)(head & (rings->capacity - 1)) * rings->record_size);
}

/* Producer: publish the reserved record; true if readers should wake. */
bool tailor_ring_commit(struct tailor_rings *rings, struct tailor_ring *ring)
{
	u64 head = ring->head + 1;

	/* The record is written before readers can see it. */
	smp_store_release(&ring->head, head);
	return head - READ_ONCE(ring->tail) == rings->wakeup;
}

static ssize_t ring_read(struct tailor_rings *rings, struct tailor_ring *ring,
			 char __user *buf, size_t max_records)
{
	u64 tail = ring->tail;
	/* Pairs with the release of head in tailor_ring_commit(). */
	u64 avail = smp_load_acquire(&ring->head) - tail;
	size_t rs = rings->record_size;
	size_t done = 0;

	avail = min_t(u64, avail, max_records);
	while (done < avail) {
		size_t idx = tail & (rings->capacity - 1);
		size_t chunk = min_t(size_t, avail - done, rings->capacity - idx);

		if (copy_to_user(buf + done * rs, ring->buf + idx * rs,
				 chunk * rs))
			break;
		done += chunk;
		tail += chunk;
	}
	/* Pairs with the acquire of tail in tailor_ring_reserve(). */
	smp_store_release(&ring->tail, tail);
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

void tailor_rings_stats(struct tailor_rings *rings, int cpu,
			struct tailor_cpu_stats *st)
{
	struct tailor_ring *ring = per_cpu_ptr(rings->cpu, cpu);
	/* One read of tail, so delivered + queued is exact once stopped. */
	u64 tail = smp_load_acquire(&ring->tail);

	st->produced = READ_ONCE(ring->produced);
	st->lost = READ_ONCE(ring->lost);
	st->throttled = READ_ONCE(ring->throttled);
	st->delivered = tail;
	/* Pairs with the release of head in tailor_ring_commit(). */
	st->queued = smp_load_acquire(&ring->head) - tail;
}
