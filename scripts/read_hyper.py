"""Prints every row of a table in a .hyper file as JSON, read through
Tableau's own Hyper API: the independent reader of tests/live/interop.rs.

usage: read_hyper.py FILE TABLE LOG_DIR
Values are rendered as text by the Hyper API's own Python types (bytes as
hex, floats with repr) so the Rust test can compare them exactly.
"""
import json
import sys

from tableauhyperapi import Connection, CreateMode, HyperProcess, TableName, Telemetry


def render(value):
    if value is None:
        return None
    if isinstance(value, bytes):
        return "hex:" + value.hex()
    if isinstance(value, float):
        return repr(value)
    return str(value)


def main():
    path, table, log_dir = sys.argv[1:4]
    with HyperProcess(
        telemetry=Telemetry.DO_NOT_SEND_USAGE_DATA_TO_TABLEAU,
        parameters={"log_dir": log_dir},
    ) as hyper:
        with Connection(hyper.endpoint, path, CreateMode.NONE) as conn:
            rows = conn.execute_list_query(f"SELECT * FROM {TableName(table)} ORDER BY 1")
            names = [c.name.unescaped for c in conn.catalog.get_table_definition(TableName(table)).columns]
    print(json.dumps({"columns": names, "rows": [[render(v) for v in row] for row in rows]}))


if __name__ == "__main__":
    main()
