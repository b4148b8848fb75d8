"""Patches over target descriptions: kernel arguments merge by name, other values replace."""

from __future__ import annotations

from bootlab.lab.patch import apply, changes, describe, merge_args
from bootlab.targets.reference import Target


def test_arguments_merge_by_name():
    assert merge_args("console=ttyS0,115200 panic=-1", "", "quiet") == ("console=ttyS0,115200 panic=-1", "quiet")
    assert merge_args("console=ttyS0,115200 panic=-1", "quiet lpj=1", "lpj=2 console=ttyS0,921600") == \
        ("console=ttyS0,921600 panic=-1", "quiet lpj=2")
    assert merge_args("a", "", 'init="/bin/sh -c x" b') == ("a", 'init="/bin/sh -c x" b')


def test_list_arguments_join():
    assert merge_args("a", "initcall_blacklist=f", "initcall_blacklist=g,f") == ("a", "initcall_blacklist=f,g")


def test_apply_composes_and_leaves_the_original_alone():
    base = Target().to_dict()
    once = apply(base, {"target": {"append": "quiet", "kernel": "cloud"}, "initramfs": {"modules": ["vivid"]}})
    twice = apply(once, {"target": {"append": "lpj=5"}, "initramfs": {"modules": []}})
    assert twice["target"]["append"] == "quiet lpj=5" and twice["target"]["kernel"] == "cloud"
    assert twice["initramfs"]["modules"] == [] and once["initramfs"]["modules"] == ["vivid"]
    assert base["target"]["append"] == "" and base["target"]["kernel"] == "generic"


def test_wrong_shapes_pass_through_for_validation_to_report():
    assert apply(Target().to_dict(), {"target": 3})["target"] == 3


def test_describe_and_changes():
    patch = {"target": {"append": "quiet"}, "initramfs": {"compression": "lz4"}}
    assert describe(patch) == "target.append += quiet; initramfs.compression = lz4"
    assert describe({}) == "(no change)"
    base = Target().to_dict()
    assert changes(base, apply(base, patch)) == {"target": {"append": "quiet"}, "initramfs": {"compression": "lz4"}}


def test_kernel_options_and_bootloader_environment_merge_by_name():
    base = {"kconfig": {"base": "tinyconfig", "options": {"KERNEL_GZIP": "y", "SLUB": "y"}},
            "bootloader": {"env": {"bootdelay": "2"}}}
    one = apply(base, {"kconfig": {"options": {"SLAB": "y"}}})
    both = apply(one, {"kconfig": {"options": {"KERNEL_GZIP": "n"}}, "bootloader": {"env": {"bootcmd": "boot"}}})
    assert both["kconfig"] == {"base": "tinyconfig", "options": {"KERNEL_GZIP": "n", "SLUB": "y", "SLAB": "y"}}
    assert both["bootloader"]["env"] == {"bootdelay": "2", "bootcmd": "boot"}
    assert base["kconfig"]["options"] == {"KERNEL_GZIP": "y", "SLUB": "y"}
