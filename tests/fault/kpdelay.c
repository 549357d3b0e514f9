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
 * @after: delay only once this function has been called (a phase of a
 * test: its teardown begins with rdma_disconnect).  @watch: count, in
 * overlaps, the calls of this function made while a delay is on (any, or
 * with @learn those on the delayed call's own object).  @learn: a
 * function that @sym calls on the same CPU with the object its argument
 * lies in; the two first arguments teach the argument's offset in the
 * object (offset), and an overlap is then a @watch call on that object:
 * e.g. a CQ destroyed while its own completion tasklet is held:
 *
 *   insmod kpdelay.ko sym=rxe_send_complete ms=100 after=rdma_disconnect \
 *          learn=ib_cq_completion_softirq watch=rxe_destroy_cq
 *
 * @fail: instead of delaying it, make the call return this (a negative
 * errno) without running the function, for callers whose third argument
 * (an int) is @arg2 (any when -1): a device or core refusing one request, e.g. a
 * QP's move to the error state (ib_modify_qp's mask IB_QP_STATE):
 *
 *   insmod kpdelay.ko sym=ib_modify_qp fail=-5 arg2=1 comm=kpcli
 *
 * @null: the same, returning 0 (NULL): an allocation failing, e.g. the
 * first vmalloc() of a sweep's second size:
 *
 *   insmod kpdelay.ko sym=vmalloc null=1 max=1 after=kp_stats_free comm=kpwrite
 *
 * @skip: let this many calls through first (those the filters above
 * select), e.g. skip=1 fails the second vmalloc() instead.
 *
 * x86-64 and arm64 only; hits then counts the calls refused.
 *
 * A kprobe handler must not sleep: the wait spins with preemption off,
 * which is what a slow or preempted CPU looks like to the other one.
 */
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/delay.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/err.h>
#include <linux/linkage.h>
#include <linux/objtool.h>

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
static char *after = "";
module_param(after, charp, 0444);
MODULE_PARM_DESC(after, "delay only once this function has been called");
static char *watch = "";
module_param(watch, charp, 0444);
MODULE_PARM_DESC(watch, "count this function's calls made during a delay");
static char *learn = "";
module_param(learn, charp, 0444);
MODULE_PARM_DESC(learn, "called by sym with its argument's object: teaches the offset");
static long offset = -1;
module_param(offset, long, 0444);
MODULE_PARM_DESC(offset, "sym's first argument's offset in its object (-1: not learned)");
static int fail;
static bool null;
static int skip;
module_param(skip, int, 0444);
MODULE_PARM_DESC(skip, "let this many selected calls through first");
static atomic_t skipped;
module_param(null, bool, 0444);
MODULE_PARM_DESC(null, "return 0 (NULL) instead of running sym");
module_param(fail, int, 0444);
MODULE_PARM_DESC(fail, "return this errno (negative) instead of running sym (0: delay)");
static long arg2 = -1;
module_param(arg2, long, 0444);
MODULE_PARM_DESC(arg2, "only calls whose third argument, an int, is this (-1: any)");
static atomic_t hits = ATOMIC_INIT(0);
module_param_named(hits, hits.counter, int, 0444);
MODULE_PARM_DESC(hits, "delays made");
static atomic_t overlaps = ATOMIC_INIT(0);
module_param_named(overlaps, overlaps.counter, int, 0444);
MODULE_PARM_DESC(overlaps, "watched calls made during a delay");

/* the first arguments of the delays on now, one slot per CPU at most */
#define KPDELAY_SLOTS	8
static unsigned long delaying[KPDELAY_SLOTS];
static bool begun;
/* sym's last first argument on this CPU, for @learn */
static DEFINE_PER_CPU(unsigned long, last_arg);

#if defined(CONFIG_X86_64)
/*
 * Where a refused call resumes: it returns to sym's caller at once, with
 * the stack as sym found it.  Reached by the kprobe's return to regs->ip,
 * never called: no ENDBR.
 */
asmlinkage void kpdelay_return(void);
asm(".text\n"
	".type kpdelay_return, @function\n"
	"kpdelay_return:\n"
	ANNOTATE_NOENDBR
	ASM_RET
	".size kpdelay_return, .-kpdelay_return\n");

static void kpdelay_refuse(struct pt_regs *regs)
{
	regs->ax = null ? 0 : fail;
	regs->ip = (unsigned long)kpdelay_return;
}

#define KPDELAY_CAN_FAIL	1
#elif defined(CONFIG_ARM64)
static void kpdelay_refuse(struct pt_regs *regs)
{
	regs->regs[0] = null ? 0 : fail;
	instruction_pointer_set(regs, procedure_link_pointer(regs));
}

#define KPDELAY_CAN_FAIL	1
#else
static void kpdelay_refuse(struct pt_regs *regs)
{
}

#define KPDELAY_CAN_FAIL	0
#endif

/*
 * Spin @ms by the clocksource, not mdelay(): its TSC loop ended a 2 s
 * hold at once now and then under TCG, whose vCPUs' TSCs the kernel
 * finds unsynchronized (a hit counted, no stall seen).  The fast
 * accessor is safe where a kprobe runs.
 */
static void kpdelay_spin(unsigned int ms)
{
	u64 end = ktime_get_mono_fast_ns() + (u64)ms * NSEC_PER_MSEC;

	while (ktime_get_mono_fast_ns() < end)
		cpu_relax();
}

static int kpdelay_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long arg = regs_get_kernel_argument(regs, 0);
	int i;

	this_cpu_write(last_arg, arg);
	if (*after && !READ_ONCE(begun))
		return 0;
	if (*comm && strncmp(current->comm, comm, TASK_COMM_LEN))
		return 0;
	/* an int argument: the register's upper half is not defined */
	if (arg2 != -1 && (int)regs_get_kernel_argument(regs, 2) != (int)arg2)
		return 0;
	if (atomic_inc_return(&skipped) <= skip)
		return 0;
	if (atomic_inc_return(&hits) > max && max) {
		atomic_dec(&hits);
		return 0;
	}
	if (fail || null) {
		kpdelay_refuse(regs);
		return 1;	/* regs->ip changed: do not step sym */
	}
	for (i = 0; i < KPDELAY_SLOTS; i++)
		if (!cmpxchg(&delaying[i], 0, arg ?: 1))
			break;
	kpdelay_spin(ms);
	if (i < KPDELAY_SLOTS)
		WRITE_ONCE(delaying[i], 0);
	return 0;
}

/*
 * A refusing kprobe must stay unoptimized: an optimized one (a jump in
 * place of the int3, CONFIG_OPTPROBES, where no ftrace call opens sym:
 * the debug kernel) runs the pre-handler and then sym, whatever the
 * pre-handler returned or did to regs->ip.  A post-handler keeps it so;
 * it runs only for the calls let through, and does nothing.
 */
static void kpdelay_post(struct kprobe *p, struct pt_regs *regs,
			 unsigned long flags)
{
}

static int kpdelay_after_pre(struct kprobe *p, struct pt_regs *regs)
{
	WRITE_ONCE(begun, true);
	return 0;
}

static int kpdelay_learn_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long obj = regs_get_kernel_argument(regs, 0);
	unsigned long arg = this_cpu_read(last_arg);

	if (arg >= obj && arg - obj < PAGE_SIZE)
		WRITE_ONCE(offset, arg - obj);
	return 0;
}

static int kpdelay_watch_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long obj = regs_get_kernel_argument(regs, 0);
	long off = READ_ONCE(offset);
	int i;

	for (i = 0; i < KPDELAY_SLOTS; i++) {
		unsigned long d = READ_ONCE(delaying[i]);

		if (d && (!*learn || (off >= 0 && d == obj + off)))
			atomic_inc(&overlaps);
	}
	return 0;
}

static struct kprobe kpdelay_probe = {
	.pre_handler = kpdelay_pre,
};

static struct kprobe kpdelay_after = {
	.pre_handler = kpdelay_after_pre,
};

static struct kprobe kpdelay_learn = {
	.pre_handler = kpdelay_learn_pre,
};

static struct kprobe kpdelay_watch = {
	.pre_handler = kpdelay_watch_pre,
};

/* Register @kp on @name if one is given; a failure is named. */
static int kpdelay_register(struct kprobe *kp, const char *name)
{
	int ret;

	if (!*name)
		return 0;
	kp->symbol_name = name;
	ret = register_kprobe(kp);
	if (ret) {
		pr_err("kpdelay: kprobe on %s: %d\n", name, ret);
		kp->symbol_name = NULL;
	}
	return ret;
}

static void kpdelay_unregister(struct kprobe *kp)
{
	if (kp->symbol_name)
		unregister_kprobe(kp);
}

static int __init kpdelay_init(void)
{
	int ret;

	if (!*sym || ms > 2000 || max < 0 || skip < 0 || fail > 0 ||
	    fail < -MAX_ERRNO)
		return -EINVAL;
	if ((fail || null) && !KPDELAY_CAN_FAIL)
		return -EOPNOTSUPP;
	ret = kpdelay_register(&kpdelay_watch, watch);
	if (ret)
		return ret;
	ret = kpdelay_register(&kpdelay_learn, learn);
	if (ret)
		goto err_watch;
	ret = kpdelay_register(&kpdelay_after, after);
	if (ret)
		goto err_learn;
	if (fail || null)
		kpdelay_probe.post_handler = kpdelay_post;
	ret = kpdelay_register(&kpdelay_probe, sym);
	if (ret)
		goto err_after;
	return 0;

err_after:
	kpdelay_unregister(&kpdelay_after);
err_learn:
	kpdelay_unregister(&kpdelay_learn);
err_watch:
	kpdelay_unregister(&kpdelay_watch);
	return ret;
}

static void __exit kpdelay_exit(void)
{
	kpdelay_unregister(&kpdelay_probe);
	kpdelay_unregister(&kpdelay_after);
	kpdelay_unregister(&kpdelay_learn);
	kpdelay_unregister(&kpdelay_watch);
}

module_init(kpdelay_init);
module_exit(kpdelay_exit);

MODULE_DESCRIPTION("Test only: delay or refuse a function's call to widen a race window");
MODULE_LICENSE("GPL");
