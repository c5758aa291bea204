"""spmdarray.comm.callsite names the user's line, skipping spmdarray's own frames."""

import os

from spmdarray.comm.callsite import user_call_site

import spmdarray


def test_names_this_line():
    f, line, fn = user_call_site()
    assert os.path.samefile(f, __file__)
    assert line == test_names_this_line.__code__.co_firstlineno + 1
    assert fn == "test_names_this_line"


def test_skips_library_frames():
    # A function whose code claims to live inside the package: its frame is skipped.
    fake = os.path.join(os.path.dirname(spmdarray.__file__), "routines", "fake_module.py")
    ns = {"user_call_site": user_call_site}
    exec(compile("def inner():\n    return user_call_site()\n", fake, "exec"), ns)
    f, line, fn = ns["inner"]()
    assert os.path.samefile(f, __file__)
    assert fn == "test_skips_library_frames"
