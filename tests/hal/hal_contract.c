// SPDX-License-Identifier: GPL-2.0
/*
 * hal_contract.ko - a test-only HAL user that breaks the Ascend driver's
 * P2P rules on purpose, so the VM tests can see the emulated NPU
 * (npu_sim.ko) catch each break as the real driver would.
 *
 * One write to /sys/kernel/debug/hal_contract/ctl is a script of steps
 * separated by ';', all run in the writing process (the HAL's rules are
 * about which process calls):
 *
 *   alloc DEV SIZE      NPU memory owned by this process; it becomes "the" va
 *   at VA               make VA (hex) "the" va: memory someone else allocated
 *   get OFF LEN [nocb]  hal_kernel_p2p_get_pages(va + OFF, LEN) into a slot,
 *                       with a free callback, or with NULL for one
 *   put SLOT            hal_kernel_p2p_put_pages of the slot's table
 *   cbput SLOT          the slot's free callback will call put_pages itself
 *   cbget SLOT          the slot's free callback will call get_pages of its va
 *   putagain SLOT       put_pages of the slot's table put already
 *   free                free the va (free callbacks run in this process)
 *   forget SLOT         drop the slot's table without put_pages (a leak)
 *   peek OFF            read the byte at va + OFF through the NPU's copy
 *   poke OFF BYTE       write BYTE (decimal) there
 *
 * Every step appends a line to /sys/kernel/debug/hal_contract/log:
 * "alloc ret=0 va=0x...", "get ret=-22", "get ret=0 slot=1 pages=2
 * page_size=2097152", "callback slot=1 put=-35", ...  A write returns its
 * length once every step parsed, whatever the HAL answered; -EINVAL for a
 * step it does not know.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/uaccess.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../../peer_client/ascend_hal_abi.h"
#include "../../peer_client/npu_sim.h"

#define HC_SLOTS	16
#define HC_LOG_MAX	4096
#define HC_CMD_MAX	512

struct hc_slot {
	struct p2p_page_table *pt;
	struct p2p_page_table *gone;	/* put already */
	u64 va;
	bool put_in_cb, get_in_cb;
	unsigned int id;
};

static DEFINE_MUTEX(hc_lock);	/* everything below; callbacks run under it */
static struct hc_slot hc_slots[HC_SLOTS];
static u64 hc_va;
static char *hc_log;
static size_t hc_log_len;
static struct dentry *hc_dir;

static __printf(1, 2) void hc_say(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (hc_log_len >= HC_LOG_MAX - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(hc_log + hc_log_len, HC_LOG_MAX - hc_log_len, fmt, ap);
	va_end(ap);
	hc_log_len = min_t(size_t, hc_log_len + n, HC_LOG_MAX - 1);
}

/*
 * The driver's free callback.  It runs inside our own "free" step (the
 * only one that frees our memory), so hc_lock is already held by this
 * very thread.
 */
static void hc_free_cb(void *data)
{
	struct hc_slot *s = data;
	int ret = 0;

	if (s->get_in_cb) {
		struct p2p_page_table *pt = NULL;

		ret = hal_kernel_p2p_get_pages(s->va, 1, hc_free_cb, s, &pt);
		if (!ret)
			hal_kernel_p2p_put_pages(pt);
		hc_say("callback slot=%u get=%d\n", s->id, ret);
		return;
	}
	if (s->put_in_cb) {
		ret = hal_kernel_p2p_put_pages(s->pt);
		if (!ret)
			s->pt = NULL;
	}
	hc_say("callback slot=%u put=%d\n", s->id, ret);
}

/* get_pages of [va + off, + len) into a free slot; @how "nocb" or NULL */
static int hc_get(u64 off, u64 len, const char *how)
{
	struct p2p_page_table *pt = NULL;
	bool nocb = how && !strcmp(how, "nocb");
	unsigned int i;
	int ret;

	if (how && !nocb)
		return -EINVAL;
	for (i = 0; i < HC_SLOTS && hc_slots[i].pt; i++)
		;
	if (i == HC_SLOTS)
		return -ENOSPC;
	hc_slots[i].id = i;
	hc_slots[i].put_in_cb = false;
	hc_slots[i].get_in_cb = false;
	hc_slots[i].va = hc_va + off;
	ret = hal_kernel_p2p_get_pages(hc_va + off, len, nocb ? NULL : hc_free_cb,
				       &hc_slots[i], &pt);
	if (ret) {
		hc_say("get ret=%d\n", ret);
		return 0;
	}
	hc_slots[i].pt = pt;
	hc_say("get ret=0 slot=%u pages=%llu page_size=%llu version=%u\n", i,
	       pt->page_num, pt->page_size, pt->version);
	return 0;
}

static int hc_step(const struct npu_sim_ops *ops, char *step)
{
	unsigned long long a, b;
	char word[8];
	unsigned int i;
	int n, ret;

	step = strim(step);
	if (!*step)
		return 0;
	n = sscanf(step, "get %llu %llu %7s", &a, &b, word);
	if (n >= 2) {
		ret = hc_get(a, b, n == 3 ? word : NULL);
		if (ret)
			return ret;
	} else if (sscanf(step, "alloc %llu %llu", &a, &b) == 2) {
		hc_va = ops->alloc(a, b, current->tgid);
		hc_say("alloc ret=%d va=0x%llx\n", hc_va ? 0 : -ENOMEM, hc_va);
	} else if (sscanf(step, "at %llx", &a) == 1) {
		hc_va = a;
		hc_say("at va=0x%llx\n", hc_va);
	} else if (sscanf(step, "put %u", &i) == 1 && i < HC_SLOTS) {
		ret = hal_kernel_p2p_put_pages(hc_slots[i].pt);
		if (!ret) {
			hc_slots[i].gone = hc_slots[i].pt;
			hc_slots[i].pt = NULL;
		}
		hc_say("put slot=%u ret=%d\n", i, ret);
	} else if (sscanf(step, "putagain %u", &i) == 1 && i < HC_SLOTS &&
		   hc_slots[i].gone) {
		ret = hal_kernel_p2p_put_pages(hc_slots[i].gone);
		hc_say("putagain slot=%u ret=%d\n", i, ret);
	} else if (sscanf(step, "cbget %u", &i) == 1 && i < HC_SLOTS) {
		hc_slots[i].get_in_cb = true;
		hc_say("cbget slot=%u\n", i);
	} else if (sscanf(step, "cbput %u", &i) == 1 && i < HC_SLOTS) {
		hc_slots[i].put_in_cb = true;
		hc_say("cbput slot=%u\n", i);
	} else if (sscanf(step, "forget %u", &i) == 1 && i < HC_SLOTS) {
		hc_slots[i].pt = NULL;
		hc_say("forget slot=%u\n", i);
	} else if (sscanf(step, "peek %llu", &a) == 1) {
		u8 byte = 0;

		ret = ops->copy_from(&byte, hc_va + a, 1);
		hc_say("peek ret=%d byte=0x%02x\n", ret, byte);
	} else if (sscanf(step, "poke %llu %llu", &a, &b) == 2 && b < 256) {
		u8 byte = b;

		ret = ops->copy_to(hc_va + a, &byte, 1);
		hc_say("poke ret=%d\n", ret);
	} else if (!strcmp(step, "free")) {
		ret = ops->free(hc_va);
		hc_say("free ret=%d\n", ret);
	} else {
		return -EINVAL;
	}
	return 0;
}

static ssize_t hc_ctl_write(struct file *f, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	const struct npu_sim_ops *ops = npu_sim_get_ops();
	char *cmd, *p, *step;
	int ret = 0;

	if (len >= HC_CMD_MAX)
		return -E2BIG;
	cmd = memdup_user_nul(ubuf, len);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	mutex_lock(&hc_lock);
	p = cmd;
	while (!ret && (step = strsep(&p, ";")))
		ret = hc_step(ops, step);
	mutex_unlock(&hc_lock);
	kfree(cmd);
	return ret ? ret : len;
}

static ssize_t hc_log_read(struct file *f, char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&hc_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, hc_log, hc_log_len);
	mutex_unlock(&hc_lock);
	return ret;
}

/* Writing anything empties the log. */
static ssize_t hc_log_write(struct file *f, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	mutex_lock(&hc_lock);
	hc_log_len = 0;
	hc_log[0] = '\0';
	mutex_unlock(&hc_lock);
	return len;
}

static const struct file_operations hc_ctl_fops = {
	.owner = THIS_MODULE,
	.write = hc_ctl_write,
	.llseek = noop_llseek,
};

static const struct file_operations hc_log_fops = {
	.owner = THIS_MODULE,
	.read = hc_log_read,
	.write = hc_log_write,
	.llseek = default_llseek,
};

static int __init hc_init(void)
{
	hc_log = kzalloc(HC_LOG_MAX, GFP_KERNEL);
	if (!hc_log)
		return -ENOMEM;
	hc_dir = debugfs_create_dir("hal_contract", NULL);
	debugfs_create_file("ctl", 0200, hc_dir, NULL, &hc_ctl_fops);
	debugfs_create_file("log", 0600, hc_dir, NULL, &hc_log_fops);
	return 0;
}

/* Tables still held are put: only "forget" leaks one, on purpose. */
static void __exit hc_exit(void)
{
	unsigned int i;

	debugfs_remove_recursive(hc_dir);
	for (i = 0; i < HC_SLOTS; i++)
		if (hc_slots[i].pt)
			hal_kernel_p2p_put_pages(hc_slots[i].pt);
	kfree(hc_log);
}

module_init(hc_init);
module_exit(hc_exit);

MODULE_DESCRIPTION("Test only: breaks the Ascend HAL's P2P rules on purpose");
MODULE_LICENSE("GPL");
