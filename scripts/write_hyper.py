"""Writes the interop test's rows with Tableau's own Hyper API: its
catalog creates the table and its Inserter writes the values. The other
direction of tests/live/interop.rs's check: this crate must read what
Tableau writes, value by value (the rows are insert.rs's `rows()`).

usage: write_hyper.py FILE LOG_DIR
The file is created anew (database version 4: NUMERIC(38) and REAL).
"""
import datetime
import sys
from decimal import Decimal

from tableauhyperapi import (
    Connection,
    CreateMode,
    Date,
    HyperProcess,
    Inserter,
    Interval,
    Nullability,
    SqlType,
    TableDefinition,
    TableName,
    Telemetry,
    Timestamp,
)

COLUMNS = [
    ("id", SqlType.int()),
    ("b", SqlType.bool()),
    ("s", SqlType.small_int()),
    ("i", SqlType.int()),
    ("bi", SqlType.big_int()),
    ("r", SqlType.float()),
    ("d", SqlType.double()),
    ("o", SqlType.oid()),
    ("n18", SqlType.numeric(18, 3)),
    ("n38", SqlType.numeric(38, 10)),
    ("t", SqlType.text()),
    ("vc", SqlType.varchar(10)),
    ("c5", SqlType.char(5)),
    ("c1", SqlType.char(1)),
    ("j", SqlType.json()),
    ("by", SqlType.bytes()),
    ("date", SqlType.date()),
    ("time", SqlType.time()),
    ("ts", SqlType.timestamp()),
    ("tstz", SqlType.timestamp_tz()),
    ("iv", SqlType.interval()),
]

ROWS = [
    [
        1, False, -32768, -2147483648, -9223372036854775808, float("-inf"), float("nan"), 0,
        Decimal("-999999999999999.999"), Decimal("-9999999999999999999999999999.9999999999"),
        "", "日本語", "abcde", "x", '{"a":[1,2]}', b"",
        Date(1066, 10, 14), datetime.time(0, 0, 0, 0), Timestamp(1850, 3, 4, 5, 6, 7, 123456),
        Timestamp(1899, 12, 31, 23, 59, 59, 999999), Interval(-14, 3, -123456789),
    ],
    [
        2, True, 32767, 2147483647, 9223372036854775807, float("nan"), float("inf"), 4294967295,
        Decimal("-0.500"), Decimal("-0.0000000001"),
        "héllo wörld ✓ 🎉 \"quoted\" 'single' \\ back", "0123456789", "ü✓€ab", "é", "[]",
        bytes([0, 255, 1, 2, ord("\\")]),
        Date(9999, 12, 31), datetime.time(23, 59, 59, 999999), Timestamp(2200, 1, 1, 0, 0, 0, 1),
        Timestamp(2101, 1, 1, 12, 0, 0, 0), Interval(1200, -30, 86399999999),
    ],
    [3, None, None, None, None, -0.5, -0.25, None,
     Decimal("999999999999999.999"), Decimal("9999999999999999999999999999.9999999999")]
    + [None] * 11,
    [4] + [None] * 20,
]


def main():
    path, log_dir = sys.argv[1:3]
    columns = [
        TableDefinition.Column(name, ty, Nullability.NOT_NULLABLE if name == "id" else Nullability.NULLABLE)
        for name, ty in COLUMNS
    ]
    table = TableDefinition(TableName("public", "all_types"), columns)
    with HyperProcess(
        telemetry=Telemetry.DO_NOT_SEND_USAGE_DATA_TO_TABLEAU,
        parameters={"log_dir": log_dir, "default_database_version": "4"},
    ) as hyper:
        with Connection(hyper.endpoint, path, CreateMode.CREATE_AND_REPLACE) as conn:
            conn.catalog.create_table(table)
            with Inserter(conn, table) as inserter:
                inserter.add_rows(ROWS)
                inserter.execute()
    print("ok")


if __name__ == "__main__":
    main()
