"""``python -m headwater.demo``: the demo command without the CLI group."""

from __future__ import annotations

from headwater.demo.command import demo

if __name__ == "__main__":
    demo(prog_name="headwater demo")
