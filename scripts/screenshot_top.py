"""Regenerate docs/top.svg, the README's picture of `coord top`, from the fixed demo board.

.venv/bin/python scripts/screenshot_top.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from coordd_apps.tui import demo
from coordd_apps.tui.app import TopApp

OUT = Path(__file__).resolve().parents[1] / "docs" / "top.svg"


async def main() -> None:
    app = TopApp(
        Path("/nonexistent"),
        "/home/ada/shop",
        agent="human-ada",
        clock=lambda: demo.NOW,
        follow=False,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        demo.show(app)
        await pilot.pause(0.2)
        OUT.write_text(app.export_screenshot(title="coord top"))


if __name__ == "__main__":
    asyncio.run(main())
    print(f"wrote {OUT}")
