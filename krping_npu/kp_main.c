// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_main.c - module and /proc/krping_npu glue.
 *
 * Writing a command runs one test in the writer's context and returns the
 * byte count or a negative errno.  Reading lists the running tests and the
 * most recent finished ones with their result lines.  /proc shows copies
 * kept in struct kp_record, never live verbs objects.
 */
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/mutex.h>
#include <linux/utsname.h>

#include "krping_npu.h"

#define KP_KEEP_FINISHED	64
#define KP_JSON_NAME		KP_NAME "_json"
#define KP_JSON_MAX		1536	/* one result's JSON line */

static DEFINE_MUTEX(kp_rec_lock);	/* kp_records, kp_finished, kp_next_id */
static LIST_HEAD(kp_records);
static unsigned int kp_finished;
static u32 kp_next_id;
static struct proc_dir_entry *kp_proc, *kp_proc_json;
struct kp_live kp_live;

static const char * const kp_rec_state_names[] = {
	[KP_REC_RUNNING] = "running",
	[KP_REC_DONE] = "done",
	[KP_REC_FAILED] = "failed",
};

void kp_rec_result(struct kp_cb *cb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mutex_lock(&kp_rec_lock);
	vsnprintf(cb->rec->result, sizeof(cb->rec->result), fmt, ap);
	mutex_unlock(&kp_rec_lock);
	va_end(ap);
}

/* Append a measured result; the array grows by one, outside the lock. */
int kp_rec_add(struct kp_cb *cb, const struct kp_result *res)
{
	struct kp_record *rec = cb->rec;
	struct kp_result *new, *old;

	new = kmalloc_array(rec->nres + 1, sizeof(*new), GFP_KERNEL);
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
	kfree(old);
	return 0;
}

void kp_rec_progress(struct kp_cb *cb, const struct kp_progress *p)
{
	char line[KP_RESULT_MAX];

	kp_progress_format(line, sizeof(line), kp_mode_name(cb->mode), p);
	kp_info(cb, "progress: %s", line);
	mutex_lock(&kp_rec_lock);
	cb->rec->progress = *p;
	cb->rec->has_progress = true;
	mutex_unlock(&kp_rec_lock);
}

void kp_rec_set_dev(struct kp_cb *cb, struct ib_device *dev)
{
	mutex_lock(&kp_rec_lock);
	strscpy(cb->rec->dev, dev_name(&dev->dev), sizeof(cb->rec->dev));
	mutex_unlock(&kp_rec_lock);
}

static struct kp_record *kp_rec_new(const struct kp_opts *o)
{
	struct kp_record *rec = kzalloc(sizeof(*rec), GFP_KERNEL);

	if (!rec)
		return NULL;
	rec->role = o->role;
	rec->mode = o->mode;
	rec->mem = o->mem;
	rec->state = KP_REC_RUNNING;
	strscpy(rec->dev, "-", sizeof(rec->dev));
	mutex_lock(&kp_rec_lock);
	rec->id = ++kp_next_id;
	list_add_tail(&rec->node, &kp_records);
	mutex_unlock(&kp_rec_lock);
	return rec;
}

/* Mark @rec finished; drop the oldest finished records beyond the limit. */
static void kp_rec_finish(struct kp_record *rec, int ret)
{
	struct kp_record *r, *tmp;

	mutex_lock(&kp_rec_lock);
	rec->state = ret ? KP_REC_FAILED : KP_REC_DONE;
	rec->has_progress = false;
	if (ret && !rec->result[0])
		snprintf(rec->result, sizeof(rec->result), "error=%d", ret);
	kp_finished++;
	list_for_each_entry_safe(r, tmp, &kp_records, node) {
		if (kp_finished <= KP_KEEP_FINISHED)
			break;
		if (r->state == KP_REC_RUNNING)
			continue;
		list_del(&r->node);
		kfree(r->res);
		kfree(r);
		kp_finished--;
	}
	mutex_unlock(&kp_rec_lock);
}

static int kp_run(const struct kp_opts *o)
{
	struct kp_cb *cb;
	int ret;

	cb = kzalloc(sizeof(*cb), GFP_KERNEL);
	if (!cb)
		return -ENOMEM;
	atomic_inc(&kp_live.tests);
	cb->opts = *o;
	cb->wait_ms = o->timeout_ms;
	init_waitqueue_head(&cb->wq);
	cb->rec = kp_rec_new(o);
	if (!cb->rec) {
		kfree(cb);
		atomic_dec(&kp_live.tests);
		return -ENOMEM;
	}

	ret = o->mem == KP_MEM_NPU ? kp_npu_get(cb) : 0;
	if (!ret)
		ret = o->role == KP_ROLE_SERVER ? kp_run_server(cb) :
		      kp_run_client(cb);
	kp_npu_put(cb);

	if (ret)
		pr_err(KP_NAME " %u: %s %s failed: error %d\n", cb->rec->id,
		       kp_role_name(o->role), kp_mode_name(cb->rec->mode), ret);
	kp_rec_finish(cb->rec, ret);
	kfree(cb);
	atomic_dec(&kp_live.tests);
	return ret;
}

static ssize_t kp_proc_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct kp_opts opts;
	char err[128];
	char *cmd;
	int ret;

	if (len > KP_CMD_MAX) {
		pr_err(KP_NAME ": command longer than %u bytes\n", KP_CMD_MAX);
		return -E2BIG;
	}
	cmd = memdup_user_nul(ubuf, len);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	ret = kp_opts_parse(cmd, len, &opts, err, sizeof(err));
	kfree(cmd);
	if (ret) {
		pr_err(KP_NAME ": %s\n", err);
		return ret;
	}
	/* a running test pins the module: rmmod is refused, not blocked */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	ret = kp_run(&opts);
	module_put(THIS_MODULE);
	return ret ? ret : (ssize_t)len;
}

/* A record's result lines: measured results, text, progress. */
static void kp_show_results(struct seq_file *m, const struct kp_record *r)
{
	char line[KP_RESULT_MAX];
	u32 i;

	for (i = 0; i < r->nres; i++) {
		const struct kp_result *res = &r->res[i];

		if (res->is_bw)
			kp_bw_format(line, sizeof(line), kp_mode_name(res->mode),
				     &res->bw);
		else
			kp_lat_format(line, sizeof(line),
				      kp_mode_name(res->mode), &res->lat);
		seq_printf(m, "%u result: %s\n", r->id, line);
	}
	if (r->result[0])
		seq_printf(m, "%u result: %s\n", r->id, r->result);
	if (r->has_progress) {
		kp_progress_format(line, sizeof(line), kp_mode_name(r->mode),
				   &r->progress);
		seq_printf(m, "%u progress: %s\n", r->id, line);
	}
}

static int kp_proc_show(struct seq_file *m, void *v)
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
		};

		kp_record_format(line, sizeof(line), r->id,
				 kp_role_name(r->role), kp_mode_name(r->mode),
				 kp_mem_name(r->mem), r->dev,
				 kp_rec_state_names[r->state], &c);
		seq_puts(m, line);
		kp_show_results(m, r);
	}
	mutex_unlock(&kp_rec_lock);
	seq_printf(m, "live tests=%d cm_ids=%d qps=%d buffers=%d\n",
		   atomic_read(&kp_live.tests), atomic_read(&kp_live.cm_ids),
		   atomic_read(&kp_live.qps), atomic_read(&kp_live.bufs));
	return 0;
}

static int kp_proc_open(struct inode *inode, struct file *file)
{
	return single_open(file, kp_proc_show, NULL);
}

static const struct proc_ops kp_proc_ops = {
	.proc_open = kp_proc_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = kp_proc_write,
};

/* /proc/krping_npu_json: one JSON object a line, a measured result each. */
static int kp_json_show(struct seq_file *m, void *v)
{
	struct kp_json_ctx c = { .kernel = utsname()->release };
	struct kp_record *r;
	char *line;
	u32 i;

	line = kmalloc(KP_JSON_MAX, GFP_KERNEL);
	if (!line)
		return -ENOMEM;
	mutex_lock(&kp_rec_lock);
	list_for_each_entry(r, &kp_records, node) {
		c.id = r->id;
		c.role = kp_role_name(r->role);
		c.mem = kp_mem_name(r->mem);
		c.dev = r->dev;
		for (i = 0; i < r->nres; i++) {
			const struct kp_result *res = &r->res[i];

			c.mode = kp_mode_name(res->mode);
			c.duration_s = res->duration_s;
			if (res->is_bw)
				kp_bw_json(line, KP_JSON_MAX, &c, &res->bw);
			else
				kp_lat_json(line, KP_JSON_MAX, &c, &res->lat);
			seq_printf(m, "%s\n", line);
		}
	}
	mutex_unlock(&kp_rec_lock);
	kfree(line);
	return 0;
}

static int kp_json_open(struct inode *inode, struct file *file)
{
	return single_open(file, kp_json_show, NULL);
}

static const struct proc_ops kp_json_ops = {
	.proc_open = kp_json_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

static int __init kp_init(void)
{
	kp_proc = proc_create(KP_NAME, 0600, NULL, &kp_proc_ops);
	if (!kp_proc)
		return -ENOMEM;
	kp_proc_json = proc_create(KP_JSON_NAME, 0400, NULL, &kp_json_ops);
	if (!kp_proc_json) {
		proc_remove(kp_proc);
		return -ENOMEM;
	}
	pr_info(KP_NAME ": loaded; write commands to /proc/" KP_NAME "\n");
	return 0;
}

static void __exit kp_exit(void)
{
	struct kp_record *r, *tmp;

	/* waits for writers still running a test */
	proc_remove(kp_proc_json);
	proc_remove(kp_proc);
	list_for_each_entry_safe(r, tmp, &kp_records, node) {
		list_del(&r->node);
		kfree(r->res);
		kfree(r);
	}
}

module_init(kp_init);
module_exit(kp_exit);

MODULE_AUTHOR("krping_npu developers");
MODULE_DESCRIPTION("RDMA ping, latency and bandwidth test harness for host and NPU memory");
MODULE_LICENSE("Dual BSD/GPL");
