// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_main.c - module and /proc/krping_npu glue.
 *
 * Writing a command runs one test in the writer's context and returns the
 * byte count or a negative errno.  Reading lists the running tests and the
 * most recent finished ones with their result lines, from the record store
 * (kp_rec.c).
 */
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

#include "krping_npu.h"

#define KP_JSON_NAME		KP_NAME "_json"

static struct proc_dir_entry *kp_proc, *kp_proc_json;

/*
 * Read-only facts of the build, for scripts/run's env.txt and the tests,
 * in /sys/module/krping_npu/parameters/ (read-only also at load):
 * rdma_stack, the RDMA stack built against (Makefile: OFED_DIR,
 * XSC_DIR); npu_bar_virt_dma, what becomes of NPU memory behind a BAR on
 * a virt-DMA device (kp_npu.c).
 */
static int kp_fact_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static int kp_fact_get(char *buf, const struct kernel_param *kp)
{
#ifdef KP_HAVE_SYSFS_EMIT
	return sysfs_emit(buf, "%s\n", (const char *)kp->arg);
#else
	return scnprintf(buf, PAGE_SIZE, "%s\n", (const char *)kp->arg);
#endif
}

static const struct kernel_param_ops kp_fact_ops = {
	.set = kp_fact_set,
	.get = kp_fact_get,
};
module_param_cb(rdma_stack, &kp_fact_ops, KP_RDMA_STACK, 0444);
MODULE_PARM_DESC(rdma_stack, "the RDMA stack built against (read only)");
module_param_cb(npu_bar_virt_dma, &kp_fact_ops, KP_NPU_BAR_VIRT_DMA, 0444);
MODULE_PARM_DESC(npu_bar_virt_dma,
		 "NPU memory behind a BAR on rxe/siw: memremap (served) or refused (read only)");

/*
 * clock: what the timed loops read (kp_clock.c), chosen at the load;
 * clock_read_ns: what one read costs, measured then (scripts/kp-target's
 * env.txt has both).
 */
static bool kp_clock_set_at_load;

static int kp_clock_param_set(const char *val, const struct kernel_param *kp)
{
	char want[16];
	int ret;

	if (strscpy(want, val, sizeof(want)) < 0)
		return -EINVAL;
	ret = kp_clock_choose(strim(want));
	if (!ret)
		kp_clock_set_at_load = true;
	return ret;
}

static int kp_clock_param_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n", kp_clock_name());
}

static const struct kernel_param_ops kp_clock_ops = {
	.set = kp_clock_param_set,
	.get = kp_clock_param_get,
};
module_param_cb(clock, &kp_clock_ops, NULL, 0444);
MODULE_PARM_DESC(clock,
		 "the timed loops' clock: auto (the cycle counter where it is invariant: tsc, cntvct; else ktime_get_ns), ktime_get_ns, tsc or cntvct (a counter even where not invariant); read: the one chosen");
static unsigned int kp_clock_ns;
module_param_named(clock_read_ns, kp_clock_ns, uint, 0444);
MODULE_PARM_DESC(clock_read_ns, "one read of that clock, ns, measured at the load (read only)");

/*
 * irq_time_accounting: whether the kernel measures softirq time apart from
 * tasks; bw's CPU cost counts it only then (kp_stats.c), and scripts/bench
 * counts perftest's the same way.
 */
#ifdef CONFIG_IRQ_TIME_ACCOUNTING
#define KP_IRQ_TIME	"y"
#else
#define KP_IRQ_TIME	"n"
#endif
module_param_cb(irq_time_accounting, &kp_fact_ops, KP_IRQ_TIME, 0444);
MODULE_PARM_DESC(irq_time_accounting,
		 "softirq time measured apart from tasks (CONFIG_IRQ_TIME_ACCOUNTING): y or n (read only)");

/* Counters since the load, read only as the facts are: probes_*. */
static int kp_count_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n",
			 atomic_read((const atomic_t *)kp->arg));
}

static const struct kernel_param_ops kp_count_ops = {
	.set = kp_fact_set,
	.get = kp_count_get,
};
module_param_cb(probes_answered, &kp_count_ops, &kp_probe_count.answered, 0444);
MODULE_PARM_DESC(probes_answered, "liveness probes the peers answered (read only)");
module_param_cb(probes_lost, &kp_count_ops, &kp_probe_count.lost, 0444);
MODULE_PARM_DESC(probes_lost, "waits ended by a peer not answering (read only)");

static int kp_run(const struct kp_opts *o)
{
	struct kp_record *rec;
	struct kp_test *t;
	int ret;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	atomic_inc(&kp_live.tests);
	kp_clock_calibrate(&t->clk);
	rec = kp_rec_new(o, &t->clk);
	if (!rec) {
		kfree(t);
		atomic_dec(&kp_live.tests);
		return -ENOMEM;
	}
	t->opts = *o;
	t->rec = rec;
	init_waitqueue_head(&t->wq);
	if (t->clk.cal_failed && t->clk.cal_ns > KP_CAL_WIDTH_NS)
		kp_info(t, "clock: %s gave no rate (its narrowest calibration read took %u ns, the bound %u): the test reads ktime_get_ns",
			kp_clock_name(), t->clk.cal_ns, KP_CAL_WIDTH_NS);
	else if (t->clk.cal_failed)
		kp_info(t, "clock: %s gave no rate (it did not advance against ktime_get_ns, or no factor fits): the test reads ktime_get_ns",
			kp_clock_name());

	ret = o->mem == KP_MEM_NPU ? kp_npu_get(t) : 0;
	if (!ret)
		ret = o->role == KP_ROLE_SERVER ? kp_run_server(t) :
		      kp_run_client(t);
	kp_npu_put(t);
	kp_lat_free(t);

	ret = kp_npu_verdict(t, ret);
	if (ret)
		pr_err(KP_NAME " %u: %s %s failed: error %d\n", rec->id,
		       kp_role_name(o->role), kp_mode_name(rec->mode), ret);
	kp_rec_finish(rec, ret);
	kfree(t);
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

static int kp_proc_open(struct inode *inode, struct file *file)
{
	return single_open(file, kp_rec_show, NULL);
}

static const struct proc_ops kp_proc_ops = {
	.proc_open = kp_proc_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = kp_proc_write,
};

static int kp_json_open(struct inode *inode, struct file *file)
{
	return single_open(file, kp_rec_show_json, NULL);
}

static const struct proc_ops kp_json_ops = {
	.proc_open = kp_json_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

static int __init kp_init(void)
{
	if (!kp_clock_set_at_load)
		kp_clock_choose("auto");
	kp_clock_ns = kp_clock_read_ns();
	kp_proc = proc_create(KP_NAME, 0600, NULL, &kp_proc_ops);
	if (!kp_proc)
		return -ENOMEM;
	kp_proc_json = proc_create(KP_JSON_NAME, 0400, NULL, &kp_json_ops);
	if (!kp_proc_json) {
		proc_remove(kp_proc);
		return -ENOMEM;
	}
	pr_info(KP_NAME ": loaded (RDMA stack: " KP_RDMA_STACK "); write commands to /proc/" KP_NAME "\n");
	return 0;
}

static void __exit kp_exit(void)
{
	/* waits for writers still running a test */
	proc_remove(kp_proc_json);
	proc_remove(kp_proc);
	kp_rec_exit();
}

module_init(kp_init);
module_exit(kp_exit);

MODULE_AUTHOR("krping_npu developers");
MODULE_DESCRIPTION("RDMA ping, latency and bandwidth test harness for host and NPU memory");
MODULE_LICENSE("Dual BSD/GPL");
/* the RDMA stack built against (Makefile: OFED_DIR, XSC_DIR): modinfo shows it */
MODULE_INFO(rdma_stack, KP_RDMA_STACK);
MODULE_VERSION(KP_VERSION);
