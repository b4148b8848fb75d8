"""A board described as a labgrid environment: labgrid's own power and console drivers
switch it and read it (labgrid, from PyPI, is the board-farm engine bootlab plugs into),
bootlab's sequence boots it (strategy.py), U-Boot on its console if [bootloader] is given.

    [labgrid]
    env = "board.yaml"              # the environment file, relative to this file
    role = "main"                   # the target in it
    strategy = ""                   # the state of the environment's strategy at U-Boot's prompt
                                    # ("uboot" for labgrid's UBootStrategy): its transition
                                    # powers the board and stops autoboot (labgrid_strategy.py);
                                    # needs [bootloader] driver = "labgrid". Empty: bootlab
                                    # switches the environment's power driver itself
    prepare = ""                    # run before each boot (puts the variant in place)
    ready = "APP READY"             # regular expression of the line that ends the boot
    silence = 30
    deadline = 120

    [bootloader]                    # optional: U-Boot on the console (uboot.py), talked to
                                    # by bootlab, or by the environment's own UBootDriver with
                                    # driver = "labgrid" (labgrid_uboot.py)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..capture.labgrid_console import LabgridSource
from .board import BoardDescription
from .description import TargetError
from .labgrid_strategy import LabgridStrategy
from .labgrid_uboot import LabgridUBoot
from .strategy import Parts

KEYS = ("labgrid", "bootloader")


@dataclass
class LabgridBoard(BoardDescription):
    TABLE = "labgrid"
    BOOTLOADER_DRIVERS = ("bootlab", "labgrid")
    env: str = ""
    role: str = "main"
    strategy: str = ""
    baud = None  # labgrid's console driver knows the line speed; console cost is not estimated

    def env_path(self) -> str:
        return str(self.base / self.env) if self.base is not None and not Path(self.env).is_absolute() else self.env

    def _absolute(self, out: "LabgridBoard") -> None:
        out.env = self.env_path()

    def checks(self) -> list[tuple[bool, str, str]]:
        return [(bool(self.env), "env", "the labgrid environment file is required"),
                (bool(self.role), "role", "the target's role in the environment is required")]

    def command(self) -> list[str]:
        return [c for c in (self.prepare, f"labgrid {self.env_path()} {self.role}") if c]

    def parts(self, capture_path: str) -> Parts:
        """labgrid's console driver is the console, its power driver the power switch (or
        its strategy, which stops autoboot too), and its UBootDriver the bootloader when
        [bootloader] driver = "labgrid"."""
        board = LabgridSource(self.env_path(), self.role)
        if self.strategy:
            parts = self.sequence_parts(board, LabgridStrategy(board, self.strategy), labgrid_strategy=self.strategy)
            parts.bootloader = LabgridUBoot(board, self.bootloader, stopped=True)
            return parts
        parts = self.sequence_parts(board, board)
        if self.bootloader is not None and self.bootloader.driver == "labgrid":
            parts.bootloader = LabgridUBoot(board, self.bootloader)
        return parts

    @classmethod
    def from_dict(cls, data: dict, where=lambda *path: ""):
        board = super().from_dict(data, where)
        if board.strategy and (board.bootloader is None or board.bootloader.driver != "labgrid"):
            raise TargetError(f"{where(cls.TABLE, 'strategy')}{cls.TABLE}.strategy: the strategy stops autoboot "
                              "with the environment's UBootDriver, which then boots the board: it needs "
                              "[bootloader] driver = \"labgrid\"")
        return board


from_dict = LabgridBoard.from_dict
