// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_rec.c - the record store: what /proc/krping_npu shows of each test
 * (struct kp_record), kept past the test's end, and the live-object
 * counters.  Tests write their records through kp_rec_*(); the /proc
 * glue reads them through kp_rec_show*().  Copies only, never a live
 * verbs object.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/utsname.h>

#include "krping_npu.h"
#include "kp_trace.h"

#define KP_KEEP_FINISHED	64
#define KP_JSON_MAX		1536	/* one result's JSON line */

/* kp_records, kp_finished, kp_next_id, the evicted unread */
static DEFINE_MUTEX(kp_rec_lock);
static LIST_HEAD(kp_records);
static unsigned int kp_finished;
static u32 kp_next_id;
static u64 kp_finish_seq;	/* the order records finished in */
/* finished records dropped before anyone read them, and the last one's id */
static u32 kp_evicted_unread;
static u32 kp_evicted_last;
struct kp_live kp_live;

static const char * const kp_rec_state_names[] = {
	[KP_REC_RUNNING] = "running",
	[KP_REC_LISTENING] = "listening",
	[KP_REC_DONE] = "done",
	[KP_REC_FAILED] = "failed",
};

void kp_rec_result(struct kp_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mutex_lock(&kp_rec_lock);
	vsnprintf(t->rec->result, sizeof(t->rec->result), fmt, ap);
	mutex_unlock(&kp_rec_lock);
	va_end(ap);
}

/*
 * Append a measured result; the array grows by one, outside the lock (a
 * qps=64 sweep keeps thousands: kvmalloc, not one large kmalloc).
 */
int kp_rec_add(struct kp_test *t, const struct kp_result *res)
{
	struct kp_record *rec = t->rec;
	struct kp_result *new, *old;

	new = kvmalloc_array(rec->nres + 1, sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	mutex_lock(&kp_rec_lock);
	if (rec->nres)
		memcpy(new, rec->res, rec->nres * sizeof(*new));
	new[rec->nres] = *res;
	old = rec->res;
	rec->res = new;
	rec->nres++;
	rec->has_progress = false;
	mutex_unlock(&kp_rec_lock);
	kvfree(old);
	return 0;
}

/* The results so far: those a size adds come after. */
u32 kp_rec_nres(struct kp_test *t)
{
	return READ_ONCE(t->rec->nres);
}

/* The port counters of a size, onto its results (@first on). */
void kp_rec_hw(struct kp_test *t, u32 first, const struct kp_hw_counters *hw)
{
	struct kp_record *rec = t->rec;
	u32 i;

	mutex_lock(&kp_rec_lock);
	for (i = first; i < rec->nres; i++)
		rec->res[i].hw = *hw;
	mutex_unlock(&kp_rec_lock);
}

void kp_rec_progress(struct kp_test *t, const struct kp_progress *p)
{
	char line[KP_RESULT_MAX];

	kp_progress_format(line, sizeof(line), kp_mode_name(t->mode), p);
	kp_info(t, "progress: %s", line);
	mutex_lock(&kp_rec_lock);
	t->rec->progress = *p;
	t->rec->has_progress = true;
	mutex_unlock(&kp_rec_lock);
}

void kp_rec_set_dev(struct kp_test *t, struct ib_device *dev)
{
	mutex_lock(&kp_rec_lock);
	strscpy(t->rec->dev, dev_name(&dev->dev), sizeof(t->rec->dev));
	mutex_unlock(&kp_rec_lock);
}

/*
 * A server's record says "listening" from its rdma_listen() to its
 * client's connect request: a script starts the client then, not after
 * a guessed sleep.
 */
void kp_rec_listening(struct kp_test *t, bool listening)
{
	mutex_lock(&kp_rec_lock);
	if (t->rec->state <= KP_REC_LISTENING)
		t->rec->state = listening ? KP_REC_LISTENING : KP_REC_RUNNING;
	mutex_unlock(&kp_rec_lock);
}

struct kp_record *kp_rec_new(const struct kp_opts *o, const struct kp_clock *k)
{
	struct kp_record *rec = kzalloc(sizeof(*rec), GFP_KERNEL);

	if (!rec)
		return NULL;
	rec->role = o->role;
	rec->mode = o->mode;
	rec->mem = o->mem;
	rec->cq = o->cq;
	rec->sge = o->sge;
	rec->rw = o->rw;
	rec->warmup = o->role == KP_ROLE_CLIENT ? o->warmup : 0;
	rec->clock = kp_clock_of(k);
	rec->clock_khz = k->khz;
	rec->clock_rate = !k->cycles ? NULL : k->measured ? "measured" : "kernel";
	rec->clock_cal_ns = k->cal_ns;
	rec->state = KP_REC_RUNNING;
	strscpy(rec->dev, "-", sizeof(rec->dev));
	mutex_lock(&kp_rec_lock);
	rec->id = ++kp_next_id;
	list_add_tail(&rec->node, &kp_records);
	mutex_unlock(&kp_rec_lock);
	return rec;
}

static void kp_rec_free(struct kp_record *r)
{
	u32 i;

	for (i = 0; i < r->nres; i++)
		if (!r->res[i].is_bw)
			kfree(r->res[i].lat.hist);
	kvfree(r->res);
	kfree(r);
}

/*
 * The finished record to drop: the oldest one a reader has seen, or, when
 * none has been, the one that finished first (a long test started before
 * many short ones is not the oldest by then), counted (and shown) as
 * evicted unread.  Under kp_rec_lock.
 */
static struct kp_record *kp_rec_victim(void)
{
	struct kp_record *r, *oldest = NULL;

	list_for_each_entry(r, &kp_records, node) {
		if (r->state <= KP_REC_LISTENING)
			continue;
		if (r->seen)
			return r;
		if (!oldest || r->finish_seq < oldest->finish_seq)
			oldest = r;
	}
	if (oldest) {
		kp_evicted_unread++;
		kp_evicted_last = oldest->id;
	}
	return oldest;
}

/*
 * Mark @rec finished; beyond KP_KEEP_FINISHED finished records, drop
 * those read already first, so that a long test's result waits for its
 * reader while short tests come and go.
 */
void kp_rec_finish(struct kp_record *rec, int ret)
{
	struct kp_record *r;

	trace_kp_test_end(rec->id, ret);
	mutex_lock(&kp_rec_lock);
	rec->state = ret ? KP_REC_FAILED : KP_REC_DONE;
	rec->finish_seq = ++kp_finish_seq;
	rec->has_progress = false;
	if (ret && !rec->result[0])
		snprintf(rec->result, sizeof(rec->result), "error=%d", ret);
	kp_finished++;
	while (kp_finished > KP_KEEP_FINISHED) {
		r = kp_rec_victim();
		if (!r)
			break;
		list_del(&r->node);
		kp_rec_free(r);
		kp_finished--;
	}
	mutex_unlock(&kp_rec_lock);
}

static_assert(KP_HW_LINE >= KP_RESULT_MAX);

/* A record's result lines: measured results, text, progress. */
static void kp_show_results(struct seq_file *m, const struct kp_record *r)
{
	/* a result's line or its counters' (the longer) */
	char line[KP_HW_LINE];
	u32 i;

	for (i = 0; i < r->nres; i++) {
		const struct kp_result *res = &r->res[i];

		if (res->is_bw)
			kp_bw_format(line, sizeof(line), kp_mode_name(res->mode),
				     &res->bw);
		else
			kp_lat_format(line, sizeof(line),
				      kp_mode_name(res->mode), &res->lat);
		/* qps=N: a connection's own line is not a result of its own */
		seq_printf(m, "%u %s: %s\n", r->id,
			   res->is_bw && res->bw.qp ? "qp" : "result", line);
		if (res->hw.have && !(res->is_bw && res->bw.qp)) {
			kp_hw_format(line, sizeof(line), &res->hw);
			seq_printf(m, "%u hw: %s\n", r->id, line);
		}
	}
	if (r->result[0])
		seq_printf(m, "%u result: %s\n", r->id, r->result);
	if (r->has_progress) {
		kp_progress_format(line, sizeof(line), kp_mode_name(r->mode),
				   &r->progress);
		seq_printf(m, "%u progress: %s\n", r->id, line);
	}
}

/* /proc/krping_npu: every record, its results, then the live objects. */
int kp_rec_show(struct seq_file *m, void *v)
{
	struct kp_record *r;
	char line[KP_RECORD_MAX];

	kp_record_header(line, sizeof(line));
	seq_puts(m, line);
	mutex_lock(&kp_rec_lock);
	list_for_each_entry(r, &kp_records, node) {
		struct kp_counters c = {
			.send_msgs = READ_ONCE(r->cnt.send_msgs),
			.send_bytes = READ_ONCE(r->cnt.send_bytes),
			.recv_msgs = READ_ONCE(r->cnt.recv_msgs),
			.recv_bytes = READ_ONCE(r->cnt.recv_bytes),
			.read_msgs = READ_ONCE(r->cnt.read_msgs),
			.read_bytes = READ_ONCE(r->cnt.read_bytes),
			.write_msgs = READ_ONCE(r->cnt.write_msgs),
			.write_bytes = READ_ONCE(r->cnt.write_bytes),
			.atomic_msgs = READ_ONCE(r->cnt.atomic_msgs),
			.atomic_bytes = READ_ONCE(r->cnt.atomic_bytes),
		};

		kp_record_format(line, sizeof(line), r->id,
				 kp_role_name(r->role), kp_mode_name(r->mode),
				 kp_mem_name(r->mem), r->dev,
				 kp_rec_state_names[r->state], &c);
		seq_puts(m, line);
		kp_show_results(m, r);
		if (r->state > KP_REC_LISTENING)
			r->seen = true;
	}
	if (kp_evicted_unread)
		seq_printf(m, "evicted unread=%u last_id=%u\n",
			   kp_evicted_unread, kp_evicted_last);
	mutex_unlock(&kp_rec_lock);
	seq_printf(m, "live tests=%d cm_ids=%d qps=%d buffers=%d\n",
		   atomic_read(&kp_live.tests), atomic_read(&kp_live.cm_ids),
		   atomic_read(&kp_live.qps), atomic_read(&kp_live.bufs));
	return 0;
}

/* /proc/krping_npu_json: one JSON object a line, a measured result each. */
int kp_rec_show_json(struct seq_file *m, void *v)
{
	struct kp_json_ctx c = { .kernel = utsname()->release };
	size_t size = KP_JSON_MAX;
	struct kp_record *r;
	char *line;
	int ret = 0;
	u32 i;

	line = kvmalloc(size, GFP_KERNEL);
	if (!line)
		return -ENOMEM;
	mutex_lock(&kp_rec_lock);
	list_for_each_entry(r, &kp_records, node) {
		c.id = r->id;
		c.role = kp_role_name(r->role);
		c.mem = kp_mem_name(r->mem);
		c.cq = kp_cq_name(r->cq);
		c.sge = r->sge;
		c.rw = r->rw;
		c.warmup = r->warmup;
		c.clock = r->clock;
		c.clock_khz = r->clock_khz;
		c.clock_rate = r->clock_rate;
		c.clock_cal_ns = r->clock_cal_ns;
		c.dev = r->dev;
		if (r->state > KP_REC_LISTENING && r->nres)
			r->seen = true;
		for (i = 0; i < r->nres; i++) {
			const struct kp_result *res = &r->res[i];
			size_t need;

			c.mode = kp_mode_name(res->mode);
			c.duration_s = res->duration_s;
			/* a connection's own line: the port's are the test's */
			c.hw = res->is_bw && res->bw.qp ? NULL : &res->hw;
			if (res->is_bw) {
				kp_bw_json(line, size, &c, &res->bw);
				seq_printf(m, "%s\n", line);
				continue;
			}
			/* a histogram makes the line as long as it needs */
			need = kp_lat_json(NULL, 0, &c, &res->lat) + 1;
			if (need > size) {
				kvfree(line);
				size = need;
				line = kvmalloc(size, GFP_KERNEL);
				if (!line) {
					ret = -ENOMEM;
					goto out;
				}
			}
			kp_lat_json(line, size, &c, &res->lat);
			seq_puts(m, line);
			seq_putc(m, '\n');
		}
	}
out:
	mutex_unlock(&kp_rec_lock);
	kvfree(line);
	return ret;
}

/* Forget every record (module exit: no test runs any more). */
void kp_rec_exit(void)
{
	struct kp_record *r, *tmp;

	list_for_each_entry_safe(r, tmp, &kp_records, node) {
		list_del(&r->node);
		kp_rec_free(r);
	}
}
