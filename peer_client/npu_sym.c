// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sym.c - functions of other modules bound by name, each with its
 * module held: the Ascend HAL and MOFED's ib_register_peer_memory_client.
 * The lowest file of npu_peer_mem.ko: it calls nothing of ours.
 *
 * __symbol_get() finds an export and holds its module.  From 6.5 (and in
 * stable trees: Debian's 6.1 and 5.10) it finds GPL exports only: the
 * HAL's are, MOFED's register call is not.  That one is found by name
 * without calling anything found by name: a kprobe on it says where it
 * is, and kallsyms how far into it the probe sits (past an ENDBR64 on
 * IBT kernels), which gives the entry.  kallsyms_lookup_name() and
 * __module_address() are not called: neither is exported, and a kernel
 * built with IBT seals their ENDBR64 (measured on Debian's 6.12), so an
 * indirect call faults on a CPU that enforces IBT.  The entry found is
 * checked for ENDBR64 there too (an export's is never sealed), and its
 * module, named by kallsyms, is held from the module list (whose nodes
 * kallsyms places: npu_sym_hold()).
 *
 * Every address bound is kept for debugfs npu_peer_mem/symbols, so that a
 * test can compare it with /proc/kallsyms.
 */
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "npu_provider.h"

#define NPU_SYM_MAX	8
#define NPU_ENDBR64	0xfa1e0ff3u	/* f3 0f 1e fa, read little-endian */
/* how a symbol found by name was bound: its entry checked under IBT */
#define NPU_SYM_BY_NAME	(IS_ENABLED(CONFIG_X86_KERNEL_IBT) ? \
			 "kprobe endbr64" : "kprobe")

static struct {
	const char *name;
	unsigned long addr;
	const char *how;	/* "export", or NPU_SYM_BY_NAME */
} npu_syms[NPU_SYM_MAX];
static unsigned int npu_nsyms;
/* npu_syms, and kallsyms' answers in npu_sym_buf */
static DEFINE_MUTEX(npu_sym_lock);
static char npu_sym_buf[KSYM_SYMBOL_LEN];	/* ~660 bytes: not on the stack */

/* Keep @name's address for npu_sym_show(); the names are literals. */
static void npu_sym_note(const char *name, unsigned long addr, const char *how)
{
	unsigned int i;

	for (i = 0; i < npu_nsyms; i++)
		if (!strcmp(npu_syms[i].name, name))
			return;
	if (npu_nsyms < NPU_SYM_MAX) {
		npu_syms[npu_nsyms].name = name;
		npu_syms[npu_nsyms].addr = addr;
		npu_syms[npu_nsyms].how = how;
		npu_nsyms++;
	}
}

/* May @addr, found by name, be called indirectly on this kernel? */
static bool npu_sym_callable(const char *name, unsigned long addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn = 0;

	if (copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) ||
	    insn != NPU_ENDBR64) {
		pr_err("npu_peer_mem: %s at 0x%lx does not start with ENDBR64 (0x%08x): an indirect call would fault under IBT, refused\n",
		       name, addr, insn);
		return false;
	}
#endif
	return true;
}

/*
 * Where @name is, from a kprobe on it: its entry into *@entry and the
 * module kallsyms names into @owner ("vmlinux" for the kernel's own).
 * -ENOENT when there is no such symbol.  Under npu_sym_lock.
 */
static int npu_sym_probe(const char *name, unsigned long *entry,
			 char *owner, size_t len)
{
	struct kprobe kp = { .symbol_name = name };
	size_t n = strlen(name);
	unsigned long addr, off;
	char *m;
	int ret;

	ret = register_kprobe(&kp);
	if (ret < 0)
		return ret;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);

	/* "name+0x4/0x40 [module]": the probe's offset in the function */
	sprint_symbol(npu_sym_buf, addr);
	if (strncmp(npu_sym_buf, name, n) || npu_sym_buf[n] != '+' ||
	    sscanf(npu_sym_buf + n, "+%lx/", &off) != 1 || off > addr) {
		pr_err("npu_peer_mem: the kprobe on %s sits at %s, not in it\n",
		       name, npu_sym_buf);
		return -EPROTO;
	}
	*entry = addr - off;
	m = strchr(npu_sym_buf, '[');
	strscpy(owner, m ? m + 1 : "vmlinux", len);
	m = strchr(owner, ']');
	if (m)
		*m = '\0';
	return 0;
}

/*
 * Hold the loaded module named @owner; -ENODEV when it is not, is going,
 * or cannot be told.  Every loaded module is on the list ours is on, and
 * so is its head, which is no module: a node is taken only where kallsyms
 * places it in @owner (as __this_module's list, where it names data), so
 * nothing is read of the head as a module (KASAN would see a global read
 * out of bounds).  Under npu_sym_lock.
 */
static int npu_sym_hold(const char *name, const char *owner,
			struct module **mod)
{
	char want[MODULE_NAME_LEN + 3];
	unsigned long off;
	struct module *m;
	int ret = -ENODEV;

	*mod = NULL;
	if (!strcmp(owner, "vmlinux"))
		return 0;
	snprintf(want, sizeof(want), " [%s]", owner);
	rcu_read_lock();
	list_for_each_entry_rcu(m, &THIS_MODULE->list, list) {
		/*
		 * "__this_module+0x8/0x500 [owner]"; without
		 * CONFIG_KALLSYMS_ALL (Debian's arm64 6.1) a module's data
		 * has no symbol, and kallsyms names the nearest function
		 * before it, still with "[owner]": the node lies in owner's
		 * memory, which holds no list node but its own module's.
		 * The head, in vmlinux's data, is named by neither.
		 */
		sprint_symbol(npu_sym_buf, (unsigned long)&m->list);
		if (!strstr(npu_sym_buf, want))
			continue;
		if (IS_ENABLED(CONFIG_KALLSYMS_ALL) &&
		    (sscanf(npu_sym_buf, "__this_module+%lx/", &off) != 1 ||
		     off != offsetof(struct module, list)))
			continue;
		if (try_module_get(m)) {
			*mod = m;
			ret = 0;
		}
		break;
	}
	rcu_read_unlock();
	if (ret)
		pr_err("npu_peer_mem: cannot hold %s, the module of %s\n",
		       owner, name);
	return ret;
}

/*
 * Bind @name into @s with its module held.  0, -ENOENT when the symbol is
 * nowhere, -EPERM when it cannot be called safely, -ENODEV when its
 * module cannot be held.
 */
int npu_sym_get(const char *name, struct npu_sym *s)
{
	unsigned long addr;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->name = name;
	mutex_lock(&npu_sym_lock);
	addr = (unsigned long)__symbol_get(name);
	if (addr) {
		s->exported = true;
		/* "name+0x0/0x40 [module]": the owner, for the load line */
		sprint_symbol(npu_sym_buf, addr);
		strscpy(s->owner, strchr(npu_sym_buf, '[') ?
			strchr(npu_sym_buf, '[') + 1 : "vmlinux",
			sizeof(s->owner));
		if (strchr(s->owner, ']'))
			*strchr(s->owner, ']') = '\0';
		npu_sym_note(name, addr, "export");
	} else {
		ret = npu_sym_probe(name, &addr, s->owner, sizeof(s->owner));
		if (!ret && !npu_sym_callable(name, addr))
			ret = -EPERM;
		if (!ret)
			ret = npu_sym_hold(name, s->owner, &s->mod);
		if (!ret)
			npu_sym_note(name, addr, NPU_SYM_BY_NAME);
	}
	if (!ret)
		s->addr = addr;
	mutex_unlock(&npu_sym_lock);
	return ret;
}

/* Let go of what npu_sym_get() bound. */
void npu_sym_put(struct npu_sym *s)
{
	if (!s->addr)
		return;
	if (s->exported)
		__symbol_put(s->name);
	else
		module_put(s->mod);
	s->addr = 0;
}

/*
 * On an IBT kernel, that the check takes an entry and refuses what is not
 * one: sprint_symbol (an export: its ENDBR64 never sealed) at its entry,
 * and 4 bytes in.  One line; -EPROTO if the check is wrong either way.
 */
int npu_sym_ibt_selftest(void)
{
	char owner[MODULE_NAME_LEN];
	unsigned long entry = 0;
	bool ok;
	int ret;

	if (!IS_ENABLED(CONFIG_X86_KERNEL_IBT)) {
		pr_info("npu_peer_mem: IBT self-test: not an IBT kernel, nothing to check\n");
		return 0;
	}
	mutex_lock(&npu_sym_lock);
	ret = npu_sym_probe("sprint_symbol", &entry, owner, sizeof(owner));
	mutex_unlock(&npu_sym_lock);
	if (ret)
		return ret;
	ok = npu_sym_callable("sprint_symbol", entry) &&
	     !npu_sym_callable("sprint_symbol+4", entry + 4);
	pr_info("npu_peer_mem: IBT self-test: sprint_symbol's entry 0x%lx %s, +4 %s\n",
		entry, ok ? "taken" : "?", ok ? "refused" : "not refused: the check is wrong");
	return ok ? 0 : -EPROTO;
}

/*
 * One line a symbol bound: "name 0xaddr how", the address as
 * /proc/kallsyms has it; "how" ends "endbr64" where the entry was checked.
 */
int npu_sym_show(struct seq_file *m, void *v)
{
	unsigned int i;

	mutex_lock(&npu_sym_lock);
	for (i = 0; i < npu_nsyms; i++)
		seq_printf(m, "%s 0x%lx %s\n", npu_syms[i].name,
			   npu_syms[i].addr, npu_syms[i].how);
	mutex_unlock(&npu_sym_lock);
	return 0;
}
