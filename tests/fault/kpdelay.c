// SPDX-License-Identifier: GPL-2.0
/*
 * kpdelay.ko - test only: widen a race window on purpose.  A kprobe on
 * the entry of function @sym busy-waits @ms milliseconds, for callers
 * whose comm is @comm (any caller when empty), at most @max times (0: no
 * limit).  /sys/module/kpdelay/parameters/hits counts the delays made, so
 * a test can tell that its window really opened.
 *
 *   insmod kpdelay.ko sym=rdma_destroy_id ms=300 comm=kpsrv
 *
 * A kprobe handler must not sleep: the wait spins with preemption off,
 * which is what a slow or preempted CPU looks like to the other one.
 */
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/string.h>

static char *sym = "";
module_param(sym, charp, 0444);
MODULE_PARM_DESC(sym, "function whose entry is delayed");
static unsigned int ms = 100;
module_param(ms, uint, 0444);
MODULE_PARM_DESC(ms, "delay in milliseconds (at most 2000)");
static char *comm = "";
module_param(comm, charp, 0444);
MODULE_PARM_DESC(comm, "delay only callers with this comm (empty: all)");
static int max;
module_param(max, int, 0444);
MODULE_PARM_DESC(max, "delay at most this many calls (0: no limit)");
static atomic_t hits = ATOMIC_INIT(0);
module_param_named(hits, hits.counter, int, 0444);
MODULE_PARM_DESC(hits, "delays made");

static int kpdelay_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (*comm && strncmp(current->comm, comm, TASK_COMM_LEN))
		return 0;
	if (atomic_inc_return(&hits) > max && max) {
		atomic_dec(&hits);
		return 0;
	}
	mdelay(ms);
	return 0;
}

static struct kprobe kpdelay_probe = {
	.pre_handler = kpdelay_pre,
};

static int __init kpdelay_init(void)
{
	int ret;

	if (!*sym || ms > 2000 || max < 0)
		return -EINVAL;
	kpdelay_probe.symbol_name = sym;
	ret = register_kprobe(&kpdelay_probe);
	if (ret)
		pr_err("kpdelay: kprobe on %s: %d\n", sym, ret);
	return ret;
}

static void __exit kpdelay_exit(void)
{
	unregister_kprobe(&kpdelay_probe);
}

module_init(kpdelay_init);
module_exit(kpdelay_exit);

MODULE_DESCRIPTION("Test only: delay a function's entry to widen a race window");
MODULE_LICENSE("GPL");
