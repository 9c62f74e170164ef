"""`make bench`: run every benchmark in bench/, one after another, and print their figures."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = 0
    for script in sorted([*HERE.glob("*.py"), *(m.parent for m in HERE.glob("*/__main__.py"))]):
        if script.name == Path(__file__).name or script.name.startswith("_"):
            continue
        print(f"\n=== {script.stem} ===", flush=True)
        failed += subprocess.run([sys.executable, str(script)], check=False).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
