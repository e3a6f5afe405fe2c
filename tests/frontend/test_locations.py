"""Kernel locations print as file:line:col whatever location kind an op carries."""

import xdsl.dialects.builtin as b

from mtia_xdsl.utils.locations import location_str

FILE = b.FileLineColLoc(b.StringAttr("k.py"), b.IntAttr(3), b.IntAttr(4))


def test_file_line_col() -> None:
    assert location_str(FILE) == "k.py:3:4"


def test_name_call_site_and_fused_locations_show_their_file_location() -> None:
    assert location_str(b.NameLoc(b.StringAttr("x"), FILE)) == "k.py:3:4"
    assert location_str(b.CallSiteLoc(FILE, b.UnknownLoc())) == "k.py:3:4"
    assert location_str(b.FusedLoc(b.ArrayAttr([FILE]), b.NoneAttr())) == "k.py:3:4"


def test_missing_location() -> None:
    assert location_str(None) == "<unknown location>"
