"""``resolve_time_zone("UTC")`` answers without reading the zone table: the table's own answer."""

from __future__ import annotations

from ctxview import jsdate


def test_the_default_zone_is_what_the_table_makes_of_it() -> None:
    assert jsdate._zone_keys()["utc"] in ("UTC", "Etc/UTC")  # (resolve_time_zone: such a key is offset 0)
    jsdate.resolve_time_zone.cache_clear()
    jsdate._zone_keys.cache_clear()
    assert jsdate.resolve_time_zone("UTC") == 0
    assert jsdate._zone_keys.cache_info().currsize == 0  # the table was not read for it
    assert jsdate.resolve_time_zone("utc") == 0  # (another spelling: from the table)
    assert jsdate._zone_keys.cache_info().currsize == 1
