// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim_bar.c - HBM behind a PCI BAR: qemu's ivshmem-plain (1af4:1110),
 * whose BAR 2 is shared memory with physical addresses that are MMIO and
 * have no struct page, as real HBM behind a BAR.  Devices bind in order to
 * NPUs 0, 1, ...; the memory is taken at load (sim_take_bar), the device
 * held until unload.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/io.h>
#include <linux/string.h>

#include "npu_sim_pool.h"

char *backing = "auto";
module_param(backing, charp, 0444);
MODULE_PARM_DESC(backing, "HBM: auto (a PCI BAR where an ivshmem device is bound, else RAM), bar or ram");

static struct pci_dev *sim_pdevs[SIM_MAX_DEVS];
static unsigned int sim_npdevs;

static int sim_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	if (!strcmp(backing, "ram") || sim_npdevs >= npu_devs)
		return -ENODEV;
	ret = pci_enable_device_mem(pdev);
	if (ret)
		return ret;
	ret = pci_request_region(pdev, 2, "npu_sim");
	if (ret) {
		pci_disable_device(pdev);
		return ret;
	}
	sim_pdevs[sim_npdevs++] = pdev;
	return 0;
}

static void sim_pci_remove(struct pci_dev *pdev)
{
	pci_release_region(pdev, 2);
	pci_disable_device(pdev);
}

static const struct pci_device_id sim_pci_ids[] = {
	{ PCI_DEVICE(0x1af4, 0x1110) },
	{ }
};

static struct pci_driver sim_pci_driver = {
	.name = "npu_sim",
	.id_table = sim_pci_ids,
	.probe = sim_pci_probe,
	.remove = sim_pci_remove,
	/* the BAR is HBM until unload: no unbinding under live memory */
	.driver.suppress_bind_attrs = true,
};

/* NPU @i's HBM is the BAR of the @i-th ivshmem device, cleared. */
int sim_take_bar(struct sim_dev *sd, unsigned int i)
{
	struct pci_dev *pdev = sim_pdevs[i];
	resource_size_t len = pci_resource_len(pdev, 2);

	sd->bar_pa = pci_resource_start(pdev, 2);
	if (len < sim_page_size || sd->bar_pa & (sim_page_size - 1)) {
		pr_err("npu_sim: %s: BAR 2 of %llu bytes at %pa does not hold aligned pages of %lu\n",
		       pci_name(pdev), (u64)len, &sd->bar_pa, sim_page_size);
		return -EINVAL;
	}
	/* a device's NPU addresses are a window of 1 << SIM_VA_SHIFT bytes */
	sd->npages = min_t(u64, len, 1ull << SIM_VA_SHIFT) / sim_page_size;
	sd->bar = memremap(sd->bar_pa, sd->npages * sim_page_size,
			   MEMREMAP_WC);
	if (!sd->bar)
		return -ENOMEM;
	memset(sd->bar, 0, sd->npages * sim_page_size);
	return 0;
}

int sim_bar_register(void)
{
	if (strcmp(backing, "auto") && strcmp(backing, "bar") &&
	    strcmp(backing, "ram")) {
		pr_err("npu_sim: backing must be auto, bar or ram\n");
		return -EINVAL;
	}
	return pci_register_driver(&sim_pci_driver);
}

void sim_bar_unregister(void)
{
	pci_unregister_driver(&sim_pci_driver);
}

/* How many NPUs have a BAR: the first ones. */
unsigned int sim_bar_count(void)
{
	return sim_npdevs;
}
