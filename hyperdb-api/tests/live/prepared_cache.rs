//! The statement cache of the `*_params` calls, against hyperd through a
//! proxy that counts the messages the client sends: a repeat must go
//! without `Parse`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, CreateMode, Endpoint};

use crate::common::{tcp_server, temp_dir};

/// Forwards TCP connections to the shared hyperd and records the tag of
/// every message clients send.
struct Proxy {
    endpoint: Endpoint,
    tags: Arc<Mutex<Vec<u8>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let Endpoint::Tcp { host, port } = tcp_server().endpoint().clone() else {
            panic!("the shared server listens on TCP")
        };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = Endpoint::tcp("127.0.0.1", listener.local_addr().unwrap().port());
        let tags = Arc::new(Mutex::new(Vec::new()));
        let seen = tags.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let upstream = TcpStream::connect((host.as_str(), port)).unwrap();
                let (mut c_in, mut s_out) =
                    (client.try_clone().unwrap(), upstream.try_clone().unwrap());
                let (mut s_in, mut c_out) = (upstream, client);
                std::thread::spawn(move || std::io::copy(&mut s_in, &mut c_out));
                let seen = seen.clone();
                std::thread::spawn(move || {
                    let mut pending = Vec::new();
                    let mut started = false;
                    let mut buf = [0u8; 64 * 1024];
                    loop {
                        let n = match c_in.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        pending.extend_from_slice(&buf[..n]);
                        // Startup has no tag: a length word first.
                        loop {
                            let header = if started { 5 } else { 4 };
                            if pending.len() < header {
                                break;
                            }
                            let at = header - 4;
                            let len = i32::from_be_bytes(pending[at..at + 4].try_into().unwrap())
                                as usize;
                            if pending.len() < at + len {
                                break;
                            }
                            if started {
                                seen.lock().unwrap().push(pending[0]);
                            }
                            started = true;
                            pending.drain(..at + len);
                        }
                        if s_out.write_all(&buf[..n]).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Proxy { endpoint, tags }
    }

    fn count(&self, tag: u8) -> usize {
        self.tags
            .lock()
            .unwrap()
            .iter()
            .filter(|&&t| t == tag)
            .count()
    }

    fn options(&self, dir: &tempfile::TempDir, file: &str) -> ConnectOptions {
        ConnectOptions::new(self.endpoint.clone())
            .with_password(tcp_server().password().unwrap())
            .with_database(dir.path().join(file), CreateMode::CreateIfNotExists)
    }
}

fn lookup(c: &mut Connection, id: i32) -> Vec<String> {
    c.query_as_params::<(String,), _>("SELECT v FROM t WHERE id = $1", &[&id])
        .unwrap()
        .map(|r| r.unwrap().0)
        .collect()
}

fn table(c: &mut Connection) {
    c.execute_command("CREATE TABLE t (id INT NOT NULL, v TEXT NOT NULL)")
        .unwrap();
    c.execute_command("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        .unwrap();
}

#[test]
fn repeats_bind_without_parse_and_the_cache_can_be_turned_off() {
    let dir = temp_dir();
    for (capacity, parses) in [(None, 1), (Some(0), 6)] {
        let proxy = Proxy::start();
        let mut opts = proxy.options(&dir, &format!("c{parses}.hyper"));
        if let Some(n) = capacity {
            opts = opts.with_statement_cache_capacity(n);
        }
        let mut c = Connection::connect_with(&opts).unwrap();
        table(&mut c);
        for i in 0..6 {
            let id = 1 + i % 2;
            assert_eq!(lookup(&mut c, id), vec![["a", "b"][i as usize % 2]]);
        }
        assert_eq!(proxy.count(b'P'), parses, "capacity {capacity:?}");
        assert_eq!(proxy.count(b'B'), 6);
        // Another parameter type is another statement.
        let rows = c
            .query("SELECT v FROM t WHERE id = $1", &[&1i64])
            .unwrap()
            .count();
        assert_eq!(rows, 1);
        assert_eq!(proxy.count(b'P'), parses + 1);
    }
}

#[test]
fn the_least_recently_used_statement_is_evicted_and_closed() {
    let dir = temp_dir();
    let proxy = Proxy::start();
    let opts = proxy
        .options(&dir, "lru.hyper")
        .with_statement_cache_capacity(2);
    let mut c = Connection::connect_with(&opts).unwrap();
    table(&mut c);
    let texts = [
        "SELECT v FROM t WHERE id = $1",
        "SELECT v || 'x' FROM t WHERE id = $1",
        "SELECT v || 'y' FROM t WHERE id = $1",
    ];
    for _round in 0..3 {
        for (i, sql) in texts.iter().enumerate() {
            let v: Vec<String> = c
                .query_as_params::<(String,), _>(*sql, &[&1])
                .unwrap()
                .map(|r| r.unwrap().0)
                .collect();
            assert_eq!(v, vec![["a", "ax", "ay"][i]]);
        }
    }
    // Cycling through three with room for two: every call misses.
    assert_eq!(proxy.count(b'P'), 9);
    c.ping().unwrap();
    assert_eq!(proxy.count(b'C'), 7, "each eviction's Close sent");
    // Two texts fit: hits from now on.
    for sql in &texts[..2] {
        c.execute(*sql, &[&2]).unwrap();
    }
    let parses = proxy.count(b'P');
    for sql in texts[..2].iter().cycle().take(6) {
        c.execute(*sql, &[&2]).unwrap();
    }
    assert_eq!(proxy.count(b'P'), parses);
}

#[test]
fn ddl_on_this_connection_empties_the_cache() {
    let dir = temp_dir();
    let proxy = Proxy::start();
    let mut c = Connection::connect_with(&proxy.options(&dir, "ddl.hyper")).unwrap();
    table(&mut c);
    let star = "SELECT * FROM t WHERE id = $1";
    assert_eq!(c.query(star, &[&1]).unwrap().schema().len(), 2);
    c.execute_command("ALTER TABLE t ADD COLUMN w INT").unwrap();
    let rows = c.query(star, &[&1]).unwrap();
    assert_eq!(rows.schema().len(), 3);
    drop(rows);
    assert_eq!(proxy.count(b'P'), 2, "parsed again after the DDL");
    // The same through the extended protocol, and a table dropped and made
    // again with other types.
    c.execute("DROP TABLE t", &[]).unwrap();
    c.execute_command("CREATE TABLE t (id INT NOT NULL, v INT)")
        .unwrap();
    c.execute_command("INSERT INTO t VALUES (1, 42)").unwrap();
    let row = c.query(star, &[&1]).unwrap().next().unwrap().unwrap();
    assert_eq!(row.try_get::<i32>(1).unwrap(), 42);
}

/// The first value of `sql` run with `$1 = 0.0`.
fn first_double(c: &mut Connection, sql: &str) -> f64 {
    let mut rows = c.query(sql, &[&0.0]).unwrap();
    rows.next().unwrap().unwrap().try_get(0).unwrap()
}

/// Statements whose tags do not say they change what names mean: hyperd
/// ends a `CREATE TABLE ... AS` with `SELECT n`, and `set_config` changes
/// the search path under a `SELECT` tag. Judged by their text, they empty
/// the cache too: a cached statement went on reading (and writing) the
/// table its name no longer meant.
#[test]
fn create_table_as_and_set_config_empty_the_cache_too() {
    let dir = temp_dir();
    let mut c = crate::common::connect(&dir, "shadow.hyper");
    c.execute_command("CREATE TABLE t (x DOUBLE PRECISION)")
        .unwrap();
    c.execute_command("INSERT INTO t VALUES (42)").unwrap();
    let read = |c: &mut Connection| first_double(c, "SELECT x FROM t WHERE x > $1");
    assert_eq!(read(&mut c), 42.0);
    c.execute_command("CREATE TEMPORARY TABLE t AS SELECT 1.5::DOUBLE PRECISION AS x")
        .unwrap();
    assert_eq!(read(&mut c), 1.5, "the temporary table the name now means");
    c.execute("INSERT INTO t VALUES ($1)", &[&2.5]).unwrap();
    let temp: i64 = c.query_scalar("SELECT count(*) FROM pg_temp.t").unwrap();
    assert_eq!(temp, 2, "the write went to the temporary table");

    c.execute_command("CREATE SCHEMA s").unwrap();
    c.execute_command("CREATE TABLE s.u (x DOUBLE PRECISION)")
        .unwrap();
    c.execute_command("CREATE TABLE public.u (x DOUBLE PRECISION)")
        .unwrap();
    c.execute_command("INSERT INTO s.u VALUES (7)").unwrap();
    c.execute_command("INSERT INTO public.u VALUES (8)")
        .unwrap();
    let read_u = |c: &mut Connection| first_double(c, "SELECT x FROM u WHERE x > $1");
    assert_eq!(read_u(&mut c), 8.0);
    let path: String = c
        .query_scalar("SELECT set_config('search_path', 's', false)")
        .unwrap();
    assert_eq!(path, "s");
    assert_eq!(read_u(&mut c), 7.0, "the search path set_config set");

    // set_config also reaches result_format_code, which SET refuses: the
    // rows of a simple Query then come as text, read as text.
    c.query_scalar::<String>("SELECT set_config('result_format_code', 'Text', false)")
        .unwrap();
    for _ in 0..6 {
        assert_eq!(c.query_scalar::<i32>("SELECT 1234").unwrap(), 1234);
    }
}

#[test]
fn a_table_changed_by_another_session_is_prepared_again_transparently() {
    let dir = temp_dir();
    let proxy = Proxy::start();
    let mut c = Connection::connect_with(&proxy.options(&dir, "other.hyper")).unwrap();
    table(&mut c);
    assert_eq!(lookup(&mut c, 1), vec!["a"]);
    let mut other = Connection::connect_with(
        &tcp_server()
            .connect_options()
            .with_database(dir.path().join("other.hyper"), CreateMode::DoNotCreate),
    )
    .unwrap();
    // Dropped and made again, same shape: hyperd answers 40001 once.
    other.execute_command("DROP TABLE t").unwrap();
    other
        .execute_command("CREATE TABLE t (id INT NOT NULL, v TEXT NOT NULL)")
        .unwrap();
    other
        .execute_command("INSERT INTO t VALUES (1, 'new')")
        .unwrap();
    assert_eq!(lookup(&mut c, 1), vec!["new"]);
    assert_eq!(proxy.count(b'P'), 2);
    // A column added: rows of another shape, a read, run again.
    let star = "SELECT * FROM t WHERE id = $1";
    assert_eq!(c.query(star, &[&1]).unwrap().schema().len(), 2);
    other
        .execute_command("ALTER TABLE t ADD COLUMN w INT")
        .unwrap();
    let rows: Vec<_> = c.query(star, &[&1]).unwrap().collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].as_ref().unwrap().schema().len(), 3);
    assert_eq!(proxy.count(b'P'), 4);
    // A write is not run twice: the error is returned, the entry forgotten.
    let returning = "INSERT INTO t SELECT * FROM t WHERE id = $1 RETURNING *";
    assert_eq!(c.query(returning, &[&1]).unwrap().count(), 1);
    other
        .execute_command("ALTER TABLE t ADD COLUMN x INT")
        .unwrap();
    let e = c.query(returning, &[&1]).unwrap_err();
    assert_eq!(e.sqlstate(), "0A000", "{e}");
    // Its write took effect (two rows with id 1 became four), once.
    let n: i64 = c
        .query_scalar("SELECT count(*) FROM t WHERE id = 1")
        .unwrap();
    assert_eq!(n, 4);
    assert_eq!(
        c.query(returning, &[&1]).unwrap().count(),
        4,
        "prepared afresh"
    );
}

#[test]
fn errors_and_failed_transactions_do_not_poison_the_cache() {
    let dir = temp_dir();
    let proxy = Proxy::start();
    let mut c = Connection::connect_with(&proxy.options(&dir, "tx.hyper")).unwrap();
    table(&mut c);
    assert_eq!(lookup(&mut c, 1), vec!["a"]);
    let insert = "INSERT INTO t VALUES ($1, $2)";
    c.execute(insert, &[&3, &"c"]).unwrap();
    let e = c.execute(insert, &[&4, &None::<&str>]).unwrap_err();
    assert_eq!(e.sqlstate(), "23502", "{e}");
    c.execute(insert, &[&5, &"e"]).unwrap();
    let mut tx = c.transaction().unwrap();
    assert_eq!(
        tx.execute_command("SELECT 1/0").unwrap_err().sqlstate(),
        "22012"
    );
    let e = tx
        .query("SELECT v FROM t WHERE id = $1", &[&1])
        .unwrap_err();
    assert_eq!(e.sqlstate(), "25P02");
    tx.rollback().unwrap();
    assert_eq!(lookup(&mut c, 1), vec!["a"]);
    assert_eq!(proxy.count(b'P'), 2, "one lookup, one insert statement");
    // A statement that never parses is not cached.
    for _ in 0..2 {
        assert_eq!(
            c.execute("SELEC $1", &[&1]).unwrap_err().sqlstate(),
            "42601"
        );
    }
    assert_eq!(lookup(&mut c, 2), vec!["b"]);
}

#[tokio::test]
async fn the_async_connection_caches_the_same_way() {
    let dir = temp_dir();
    let proxy = Proxy::start();
    let mut c = AsyncConnection::connect_with(&proxy.options(&dir, "async.hyper"))
        .await
        .unwrap();
    c.execute_command("CREATE TABLE t (id INT, v TEXT)")
        .await
        .unwrap();
    for id in 0..10 {
        c.execute_command_params("INSERT INTO t VALUES ($1, $2)", &[&id, &"x"])
            .await
            .unwrap();
    }
    for id in 0..10 {
        let mut rows = c
            .execute_query_params("SELECT id FROM t WHERE id = $1", &[&id])
            .await
            .unwrap();
        let row = rows.next().await.unwrap().unwrap();
        assert_eq!(row.try_get::<i32>(0).unwrap(), id);
    }
    assert_eq!(proxy.count(b'P'), 2);
    assert_eq!(proxy.count(b'B'), 20);
}

#[test]
fn a_dropped_statement_is_closed_with_the_next_request() {
    let dir = temp_dir();
    let proxy = Proxy::start();
    let opts = proxy
        .options(&dir, "drop.hyper")
        .with_statement_cache_capacity(0);
    let mut c = Connection::connect_with(&opts).unwrap();
    table(&mut c);
    let s = c.prepare("SELECT v FROM t WHERE id = $1").unwrap();
    let clone = s.clone();
    drop(s);
    c.ping().unwrap();
    assert_eq!(proxy.count(b'C'), 0, "a clone still holds it");
    assert_eq!(c.query(&clone, &[&2]).unwrap().count(), 1);
    drop(clone);
    assert_eq!(proxy.count(b'C'), 0, "nothing sent by drop itself");
    let syncs = proxy.count(b'S');
    c.ping().unwrap();
    assert_eq!(proxy.count(b'C'), 1, "sent with the next request");
    assert_eq!(proxy.count(b'S'), syncs + 1, "in its Sync group");
    // The name is free on the server: the connection goes on as before.
    let again = c.prepare("SELECT v FROM t WHERE id = $1").unwrap();
    assert_eq!(c.query(&again, &[&1]).unwrap().count(), 1);
}

/// Closes queued by evictions wait for the next extended request: a plain
/// query that runs as a simple `Query` (its row route, once it has shown a
/// small result) meets no `CloseComplete` it did not ask for. It used to
/// fail with 08P01 "simple query: unexpected CloseComplete".
#[test]
fn closes_queued_by_evictions_wait_for_an_extended_request() {
    let dir = temp_dir();
    let proxy = Proxy::start();
    let opts = proxy
        .options(&dir, "evict.hyper")
        .with_statement_cache_capacity(1);
    let mut c = Connection::connect_with(&opts).unwrap();
    table(&mut c);
    for sql in [
        "SELECT v FROM t WHERE id = $1",
        "SELECT v || 'x' FROM t WHERE id = $1",
    ] {
        assert_eq!(c.execute_query_params(sql, &[&1]).unwrap().count(), 1);
    }
    // The first statement was evicted; its Close is queued. Three runs of a
    // plain query: the first as Arrow, then as simple `Query`s.
    for run in 0..3 {
        let n: i64 = c.query_scalar("SELECT count(*) FROM t").unwrap();
        assert_eq!(n, 2, "run {run}");
    }
    assert_eq!(proxy.count(b'C'), 0, "not sent with a simple Query");
    c.ping().unwrap();
    assert_eq!(proxy.count(b'C'), 1, "sent with the next extended request");
    assert_eq!(lookup(&mut c, 2), vec!["b".to_owned()]);
}
