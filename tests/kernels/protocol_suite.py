"""jupyter_kernel_test's protocol suite for ipykernel's python3, as its
own test_ipykernel.py sets it up. tests/test_provisioner.py runs it twice,
under jupyter-guard's provisioner and without it, and compares the pass
lists. PROTOCOL_SUITE_RECORD names a file where each kernel's launcher
is written, so that the test knows which way the kernels were started."""

from __future__ import annotations

import os
import unittest
from pathlib import Path

import jupyter_kernel_test


def record(km) -> None:
    path = os.environ.get("PROTOCOL_SUITE_RECORD")
    if path:
        with open(path, "a") as f:
            f.write(f"{type(km.provisioner).__name__} {' '.join(km.provisioner.process.args)}\n")


class IPyKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "python3"
    language_name = "python"
    file_extension = ".py"

    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('test', file=sys.stderr)"
    completion_samples = [{"text": "zi", "matches": {"zip"}}]
    complete_code_samples = ["1", "print('hello, world')", "def f(x):\n  return x*2\n\n\n"]
    incomplete_code_samples = ["print('''hello", "def f(x):\n  x*2"]
    invalid_code_samples = ["import = 7q"]
    code_page_something = "zip?"
    code_generate_error = "raise"
    code_execute_result = [
        {"code": "1+2+3", "result": "6"},
        {"code": "[n*n for n in range(1, 4)]", "result": "[1, 4, 9]"},
    ]
    code_display_data = [
        {"code": "from IPython.display import HTML, display; display(HTML('<b>test</b>'))", "mime": "text/html"},
        {"code": "from IPython.display import Math, display; display(Math('\\\\frac{1}{2}'))", "mime": "text/latex"},
    ]
    code_history_pattern = "1?2*"
    supported_history_operations = ("tail", "search")
    code_inspect_sample = "zip"
    code_clear_output = "from IPython.display import clear_output; clear_output()"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        record(cls.km)


class IPyKernelWelcomeTests(jupyter_kernel_test.IopubWelcomeTests):
    kernel_name = "python3"
    support_iopub_welcome = True

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        record(cls.km)


if __name__ == "__main__":
    unittest.main()
