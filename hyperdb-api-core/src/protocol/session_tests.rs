#[test]
fn debug_never_shows_the_cancel_secret() {
    let mut session = Session::new(Limits::default(), None);
    session.set_backend_key(4242, 987_654_321);
    let shown = format!("{session:?}");
    assert!(!shown.contains("987654321"), "{shown}");
    let key = format!("{:?}", session.backend_key.unwrap());
    assert!(key.contains("4242") && !key.contains("987654321"), "{key}");
    assert_eq!(session.backend_key(), Some((4242, 987_654_321)));
}

use super::*;
use bytes::BufMut;

fn push(s: &mut Session, tag: u8, body: &[u8]) {
    let b = s.read_buf();
    b.put_u8(tag);
    b.put_i32(body.len() as i32 + 4);
    b.put_slice(body);
}

#[test]
fn a_mark_lasts_until_the_next_request() {
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    assert_eq!(s.mark(), None);
    s.set_mark(7);
    assert_eq!(s.mark(), Some(7));
    push(&mut s, b'Z', b"I");
    while s.next_message().unwrap().is_some() {}
    assert_eq!(s.mark(), Some(7), "reading replies keeps it");
    s.expect_ready();
    assert_eq!(s.mark(), None, "a request clears it");
}

#[test]
fn error_is_held_until_ready_and_session_stays_usable() {
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    s.expect_ready();
    push(&mut s, b'E', b"SERROR\0C42601\0Mbad\0\0");
    push(&mut s, b'D', &[0, 0]);
    assert!(
        s.next_message().unwrap().is_none(),
        "error waits for ReadyForQuery"
    );
    push(&mut s, b'Z', b"I");
    let e = s.next_message().unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42601"));
    assert_eq!(s.outstanding(), 0);
    assert!(s.check_usable().is_ok());
}

/// An error inside a transaction block fails it until the block ends,
/// whatever hyperd reports after it (it reports `T` after an error of a
/// statement with parameters); forgiving takes back only what hyperd did
/// not report itself.
#[test]
fn an_error_in_a_transaction_block_fails_it_until_it_ends() {
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    let reply = |s: &mut Session, error: bool, status: &[u8]| {
        s.expect_ready();
        if error {
            push(s, b'E', b"SERROR\0C22012\0Mdivision by zero\0\0");
        }
        push(s, b'Z', status);
        while let Ok(Some(_)) = s.next_message() {}
    };
    reply(&mut s, false, b"T");
    assert_eq!(s.transaction_status(), TransactionStatus::InTransaction);
    reply(&mut s, true, b"T");
    assert_eq!(s.transaction_status(), TransactionStatus::Failed);
    reply(&mut s, false, b"T");
    assert_eq!(s.transaction_status(), TransactionStatus::Failed, "sticky");
    assert!(s.forgive_failure());
    assert_eq!(s.transaction_status(), TransactionStatus::InTransaction);
    reply(&mut s, true, b"E");
    assert!(!s.forgive_failure(), "hyperd's own failure stays");
    assert_eq!(s.transaction_status(), TransactionStatus::Failed);
    reply(&mut s, true, b"T");
    reply(&mut s, false, b"I");
    assert_eq!(s.transaction_status(), TransactionStatus::Idle);
    // Outside a block an error fails nothing.
    reply(&mut s, true, b"I");
    assert_eq!(s.transaction_status(), TransactionStatus::Idle);
}

/// After hyperd's "packet too large" the stream is out of step: the
/// error is reported, and every later request fails fast.
#[test]
fn packet_too_large_breaks_the_session() {
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    s.expect_ready();
    push(&mut s, b'E', b"SERROR\0C54000\0Mpacket too large\0\0");
    push(&mut s, b'Z', b"I");
    let e = s.next_message().unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::PROGRAM_LIMIT_EXCEEDED));
    assert!(s.check_usable().unwrap_err().is_closed());
    // Another 54000 is an ordinary error.
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    s.expect_ready();
    push(&mut s, b'E', b"SERROR\0C54000\0Mtoo many columns\0\0");
    push(&mut s, b'Z', b"I");
    assert!(s.next_message().is_err());
    assert!(s.check_usable().is_ok());
}

#[test]
fn fatal_breaks_at_once() {
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    push(&mut s, b'E', b"SFATAL\0VFATAL\0C57P01\0Mshutdown\0\0");
    let e = s.next_message().unwrap_err();
    assert!(e.is_closed());
    assert!(s.check_usable().unwrap_err().is_closed());
}

#[test]
fn notices_go_to_the_handler() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut s = Session::new(
        Limits::default(),
        Some(Arc::new(move |n: &DbError| {
            sink.lock().unwrap().push(n.message.clone())
        })),
    );
    push(&mut s, b'N', b"SWARNING\0Mcareful\0\0");
    push(&mut s, b'S', b"a\0b\0");
    push(&mut s, b'Z', b"T");
    assert!(matches!(
        s.next_message().unwrap(),
        Some(Message::ReadyForQuery(_))
    ));
    assert_eq!(*seen.lock().unwrap(), vec!["careful".to_string()]);
    assert_eq!(s.parameter("a"), Some("b"));
    assert_eq!(s.transaction_status(), TransactionStatus::InTransaction);
}

/// Reads as a driver does: at most what `prepare_read` allows, from `wire`.
fn read_some(s: &mut Session, wire: &mut &[u8]) {
    let n = s.prepare_read(1 << 20).min(wire.len());
    assert!(n > 0, "nothing left to read");
    s.read_buf().put_slice(&wire[..n]);
    *wire = &wire[n..];
}

#[test]
fn copy_out_payloads_arrive_aligned() {
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    s.expect_ready();
    assert_eq!(s.prepare_read(1 << 20), 1 << 20, "no COPY OUT: full window");
    push(&mut s, b'H', &[0, 0, 0]);
    assert!(matches!(
        s.next_message().unwrap(),
        Some(Message::CopyOutResponse(_))
    ));
    let mut wire = Vec::new();
    for (i, len) in [100_000usize, 70_001, 3, 2_000_000].into_iter().enumerate() {
        wire.push(b'd');
        wire.extend_from_slice(&(len as i32 + 4).to_be_bytes());
        wire.extend(std::iter::repeat_n(i as u8, len));
    }
    wire.extend_from_slice(&[b'c', 0, 0, 0, 4, b'Z', 0, 0, 0, 5, b'I']);
    let mut wire = &wire[..];
    let mut payloads = Vec::new();
    loop {
        match s.next_message().unwrap() {
            Some(Message::CopyData(p)) => payloads.push(p),
            Some(Message::CopyDone) => {}
            Some(Message::ReadyForQuery(_)) => break,
            Some(other) => panic!("{other:?}"),
            None => read_some(&mut s, &mut wire),
        }
    }
    let lens: Vec<usize> = payloads.iter().map(|p| p.len()).collect();
    assert_eq!(lens, [100_000, 70_001, 3, 2_000_000]);
    for (i, p) in payloads.iter().enumerate() {
        assert!(p.iter().all(|&b| b == i as u8), "payload {i} intact");
    }
    // The large ones start aligned; the small one after an odd-sized
    // one cannot, and needs not.
    for i in [0, 1, 3] {
        assert_eq!(
            payloads[i].as_ptr() as usize % PAYLOAD_ALIGN,
            0,
            "payload {i}"
        );
    }
    let limit = s.prepare_read(1 << 20);
    assert!(
        limit > backend::HEADER && s.read_buf().capacity() - s.read_buf().len() >= limit,
        "COPY OUT over: a read of {limit} into the buffer's room"
    );
}

/// Messages a caller keeps (Node holds a batch's memory until V8 collects
/// it) fill one receive allocation after another instead of pinning one
/// each: with every message arriving in a read of its own, small and large
/// ones mixed, a new allocation starts only when the last is nearly full.
#[test]
fn held_messages_share_their_allocations() {
    const WINDOW: usize = 1 << 20;
    let lens: Vec<usize> = (0..60)
        .map(|i| if i % 4 == 3 { 100_000 + i } else { 20_000 + i })
        .collect();
    let (mut s, wire) = copy_out_message(&lens);
    let mut wire = &wire[..];
    let (mut held, mut allocations, mut end) = (Vec::new(), 0, 0usize);
    loop {
        match s.next_message().unwrap() {
            Some(Message::CopyData(p)) => held.push(p),
            Some(Message::CopyDone) => break,
            Some(other) => panic!("{other:?}"),
            None => {
                // A server slower than the client: a read brings at most
                // the rest of the message being read.
                let in_message = match backend::peek_header(s.read_buf(), &Limits::default()) {
                    Ok(Some((_, len))) => backend::HEADER + len - s.read_buf().len(),
                    _ => backend::HEADER - s.read_buf().len(),
                };
                let n = s.prepare_read(WINDOW).min(in_message).min(wire.len());
                let buf = s.read_buf();
                assert!(buf.capacity() - buf.len() >= n, "the read fits");
                // Held messages keep the buffer from being reclaimed, so
                // a read that does not continue where the last one ended
                // (but for an alignment gap) is in a new allocation.
                let at = buf.as_ptr() as usize + buf.len();
                if at.abs_diff(end) > PAYLOAD_ALIGN {
                    allocations += 1;
                }
                buf.put_slice(&wire[..n]);
                end = buf.as_ptr() as usize + buf.len();
                wire = &wire[n..];
            }
        }
    }
    for (p, &len) in held.iter().zip(&lens) {
        assert_eq!(p.len(), len);
        if len >= 64 * 1024 {
            assert_eq!(p.as_ptr() as usize % PAYLOAD_ALIGN, 0);
        }
    }
    let total: usize = lens.iter().sum();
    let bound = total.div_ceil(WINDOW - WINDOW / SPARE_FRACTION) + 1;
    assert!(
        allocations <= bound,
        "{allocations} allocations for {total} bytes in {} messages (at most {bound})",
        lens.len()
    );
}

/// A `CopyData` header declaring 250 MiB reserves no more than a read
/// window or two before the bytes arrive; as they do, the buffer grows
/// (at most doubling) with the payload still aligned, and the message
/// arrives whole.
#[test]
fn copy_out_buffers_grow_with_what_arrives() {
    const WINDOW: usize = 64 * 1024;
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    s.expect_ready();
    push(&mut s, b'H', &[0, 0, 0]);
    assert!(matches!(
        s.next_message().unwrap(),
        Some(Message::CopyOutResponse(_))
    ));
    assert_eq!(s.prepare_read(WINDOW), backend::HEADER);
    s.read_buf().put_u8(b'd');
    s.read_buf().put_i32((250 << 20) + 4);
    assert_eq!(s.prepare_read(WINDOW), WINDOW);
    assert!(s.read_buf().capacity() <= 2 * WINDOW + 4 * PAYLOAD_ALIGN);
    assert!(s.next_message().unwrap().is_none());

    // A 1 MiB message read a window at a time.
    let len = 1 << 20;
    let (mut s, wire) = copy_out_message(&[len]);
    let mut grown = 0;
    let mut before = s.read_buf().capacity();
    let payload = read_copy_data(&mut s, &mut &wire[..], WINDOW, |s, have, n| {
        let room = s.read_buf().capacity();
        assert!(room >= have + n, "the read fits");
        assert!(
            room <= 2 * (have + WINDOW) + 4 * PAYLOAD_ALIGN,
            "{room} for {have}"
        );
        grown += usize::from(room != before);
        before = room;
    });
    assert_whole_and_aligned(&payload, len);
    assert!(grown <= 6, "grew {grown} times");
}

/// A message of a few windows (hyperd's Arrow messages on a wide table)
/// after one as large gets its whole buffer when its header is read: no
/// later read moves payload bytes, and the payload arrives aligned and
/// whole. The first message, which nothing that arrived vouches for,
/// grows with its bytes.
#[test]
fn copy_out_messages_of_a_few_windows_are_placed_once() {
    const WINDOW: usize = 64 * 1024;
    let len = 5 * WINDOW / 2;
    let (mut s, wire) = copy_out_message(&[len, len]);
    let mut wire = &wire[..];
    let (mut buffer, mut grew) = (0, false);
    let first = read_copy_data(&mut s, &mut wire, WINDOW, |s, have, _| {
        let start = s.read_buf().as_ptr() as usize;
        grew |= start != buffer && have > backend::HEADER;
        buffer = start;
    });
    assert_whole_and_aligned(&first, len);
    assert!(grew, "the first message's buffer grows with its bytes");
    let second = read_copy_data(&mut s, &mut wire, WINDOW, |s, have, _| {
        let start = s.read_buf().as_ptr() as usize;
        assert!(
            start == buffer || have <= backend::HEADER,
            "{have} bytes moved to a new buffer"
        );
        buffer = start;
    });
    assert_whole_and_aligned(&second, len);
}

/// `payload` is [`copy_out_message`]'s, whole, starting aligned.
fn assert_whole_and_aligned(payload: &[u8], len: usize) {
    assert_eq!(payload.len(), len);
    assert!(payload
        .iter()
        .enumerate()
        .all(|(i, &b)| b == (i % 251) as u8));
    assert_eq!(payload.as_ptr() as usize % PAYLOAD_ALIGN, 0);
}

/// A session in a COPY OUT, and the wire of `CopyData` messages of
/// `lens` bytes (byte `i` of each is `i % 251`) and the `CopyDone`.
fn copy_out_message(lens: &[usize]) -> (Session, Vec<u8>) {
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    s.expect_ready();
    push(&mut s, b'H', &[0, 0, 0]);
    s.next_message().unwrap();
    let mut wire = Vec::new();
    for &len in lens {
        wire.push(b'd');
        wire.extend_from_slice(&(len as i32 + 4).to_be_bytes());
        wire.extend((0..len).map(|i| (i % 251) as u8));
    }
    wire.extend_from_slice(&[b'c', 0, 0, 0, 4]);
    (s, wire)
}

/// Reads from `wire` as a driver does, at most `window` a read, until a
/// `CopyData` message arrives. `check` sees the session after each
/// `prepare_read`, with what was buffered before it and the read's size.
fn read_copy_data(
    s: &mut Session,
    wire: &mut &[u8],
    window: usize,
    mut check: impl FnMut(&mut Session, usize, usize),
) -> bytes::Bytes {
    loop {
        match s.next_message().unwrap() {
            Some(Message::CopyData(p)) => return p,
            Some(other) => panic!("{other:?}"),
            None => {
                let have = s.read_buf().len();
                let n = s.prepare_read(window).min(wire.len());
                check(s, have, n);
                s.read_buf().put_slice(&wire[..n]);
                *wire = &wire[n..];
            }
        }
    }
}

/// A long run of rows is read through one window-sized buffer: each
/// read tops it up to the window, so it never grows (a whole window on
/// top of the cut-off rest doubled it).
#[test]
fn row_reads_keep_to_one_window() {
    const WINDOW: usize = 64 * 1024;
    let mut s = Session::new(Limits::default(), None);
    s.finish_startup();
    let mut wire = Vec::new();
    for i in 0..20_000i32 {
        wire.push(b'D');
        wire.extend_from_slice(&(4i32 + 2 + 4 + 4).to_be_bytes());
        wire.extend_from_slice(&1i16.to_be_bytes());
        wire.extend_from_slice(&4i32.to_be_bytes());
        wire.extend_from_slice(&i.to_le_bytes());
    }
    let mut wire = &wire[..];
    let (mut rows, mut reads) = (0, 0);
    while !wire.is_empty() || !s.read_buf().is_empty() {
        match s.next_message().unwrap() {
            Some(Message::DataRows(block)) => rows += block.len(),
            Some(other) => panic!("{other:?}"),
            None => {
                // What a driver does: reserve the limit, read into it.
                let limit = s.prepare_read(WINDOW);
                let buf = s.read_buf();
                assert!(limit > 0 && limit <= WINDOW);
                buf.reserve(limit);
                let n = limit.min(wire.len());
                buf.put_slice(&wire[..n]);
                wire = &wire[n..];
                reads += 1;
                assert!(buf.capacity() <= WINDOW, "read {reads}: {}", buf.capacity());
            }
        }
    }
    assert_eq!(rows, 20_000);
    assert!(reads >= 280_000 / WINDOW, "{reads} reads");
    assert_eq!(fill_to(0, WINDOW), WINDOW);
    assert_eq!(fill_to(13, WINDOW), WINDOW - 13);
    assert_eq!(fill_to(WINDOW, WINDOW), WINDOW, "a large message reads on");
}

/// Past [`MAX_PARAMETERS`] distinct names, new ones are ignored and
/// known ones still updated; oversized names and values are not kept.
#[test]
fn parameters_are_capped() {
    let mut s = Session::new(Limits::default(), None);
    push(&mut s, b'S', b"server_version\09.1.0\0");
    for i in 0..MAX_PARAMETERS + 10 {
        push(&mut s, b'S', format!("p{i}\0v\0").as_bytes());
    }
    push(&mut s, b'S', b"server_version\09.2.0\0");
    let long_value = format!("big\0{}\0", "x".repeat(MAX_PARAMETER_VALUE + 1));
    let long_name = format!("{}\0v\0", "n".repeat(MAX_PARAMETER_NAME + 1));
    push(&mut s, b'S', long_value.as_bytes());
    push(&mut s, b'S', long_name.as_bytes());
    assert!(s.next_message().unwrap().is_none());
    assert_eq!(s.parameters.len(), MAX_PARAMETERS);
    assert_eq!(s.parameter("server_version"), Some("9.2.0"));
    assert_eq!(s.parameter(&format!("p{}", MAX_PARAMETERS - 2)), Some("v"));
    assert_eq!(s.parameter(&format!("p{}", MAX_PARAMETERS - 1)), None);
    assert_eq!(s.parameter("big"), None);
    // A known name whose new value is oversized is forgotten, not left stale.
    let oversized = format!("p0\0{}\0", "x".repeat(MAX_PARAMETER_VALUE + 1));
    push(&mut s, b'S', oversized.as_bytes());
    assert!(s.next_message().unwrap().is_none());
    assert_eq!(s.parameter("p0"), None);
    // And the freed slot takes a new name.
    push(&mut s, b'S', b"late\0yes\0");
    assert!(s.next_message().unwrap().is_none());
    assert_eq!(s.parameter("late"), Some("yes"));
}

#[test]
fn garbage_breaks_the_session() {
    let mut s = Session::new(Limits::default(), None);
    s.read_buf().put_slice(&[b'Z', 0, 0, 0, 1]);
    assert!(s.next_message().is_err());
    assert!(s.is_broken());
}
