"""Runs SQL statements through Tableau's own Hyper API and prints what each
returns, as JSON: the other half of tests/live/interop.rs's check that the
same SQL gives the same values through both clients.

usage: query_hyper.py LOG_DIR < statements.json
Input: a JSON list of SQL statements, each returning one text value.
Output: a JSON list, per statement ["ok", value] or ["error", null].
"""
import json
import sys

from tableauhyperapi import Connection, HyperException, HyperProcess, Telemetry


def main():
    statements = json.load(sys.stdin)
    out = []
    with HyperProcess(
        telemetry=Telemetry.DO_NOT_SEND_USAGE_DATA_TO_TABLEAU,
        parameters={"log_dir": sys.argv[1]},
    ) as hyper:
        with Connection(hyper.endpoint) as conn:
            for sql in statements:
                try:
                    out.append(["ok", conn.execute_scalar_query(sql)])
                except HyperException:
                    out.append(["error", None])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
