//! Codec tests: every message, every split point, malformed frames. No server.

use bytes::{BufMut, Bytes, BytesMut};

use super::*;

/// Frames a body the way the server does.
pub(super) fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn parse_all(bytes: &[u8]) -> Result<Vec<Message>> {
    let mut buf = BytesMut::from(bytes);
    let mut out = Vec::new();
    while let Some(m) = parse(&mut buf, &Limits::default())? {
        out.push(m);
    }
    assert!(buf.is_empty(), "left {} bytes", buf.len());
    Ok(out)
}

/// A `DataRow` body: the field count, then each field's length word (-1
/// for NULL) and bytes.
pub(super) fn data_row(fields: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(fields.len() as i16).to_be_bytes());
    for f in fields {
        match f {
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(v) => {
                b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                b.extend_from_slice(v);
            }
        }
    }
    b
}

/// One of every message the server can send, and what it parses to.
fn corpus() -> Vec<(Vec<u8>, Message)> {
    let mut row_desc = Vec::new();
    row_desc.extend_from_slice(&2i16.to_be_bytes());
    for (name, oid) in [("id", 23u32), ("name", 25)] {
        row_desc.extend_from_slice(name.as_bytes());
        row_desc.push(0);
        row_desc.extend_from_slice(&7u32.to_be_bytes());
        row_desc.extend_from_slice(&1i16.to_be_bytes());
        row_desc.extend_from_slice(&oid.to_be_bytes());
        row_desc.extend_from_slice(&4i16.to_be_bytes());
        row_desc.extend_from_slice(&(-1i32).to_be_bytes());
        row_desc.extend_from_slice(&2i16.to_be_bytes());
    }
    let field = |name: &str, oid| FieldDescription {
        name: name.into(),
        table_oid: 7,
        column_id: 1,
        type_oid: oid,
        type_size: 4,
        type_modifier: -1,
        format: 2,
    };
    let err_body = b"SERROR\0VERROR\0C42601\0Msyntax error\0Dmore\0Hfix it\0P8\0Fscan.l\0L12\0Rparser\0xignored\0\0";
    let mut err = DbError::new(Some(SqlState::SYNTAX_ERROR), "syntax error");
    err.detail = Some("more".into());
    err.hint = Some("fix it".into());
    err.position = Some(8);
    err.file = Some("scan.l".into());
    err.line = Some(12);
    err.routine = Some("parser".into());
    let mut notice = DbError::new(None, "hello");
    notice.severity = Some(Severity::Notice);

    let row = data_row(&[Some(&7i32.to_le_bytes()), None, Some(b"")]);
    vec![
        (
            frame(b'R', &0i32.to_be_bytes()),
            Message::Authentication(Authentication::Ok),
        ),
        (
            frame(b'R', &3i32.to_be_bytes()),
            Message::Authentication(Authentication::CleartextPassword),
        ),
        (
            frame(b'R', &[0, 0, 0, 5, 1, 2, 3, 4]),
            Message::Authentication(Authentication::Md5Password { salt: [1, 2, 3, 4] }),
        ),
        (
            frame(b'R', b"\0\0\0\x0aSCRAM-SHA-256\0SCRAM-SHA-256-PLUS\0\0"),
            Message::Authentication(Authentication::Sasl {
                mechanisms: vec!["SCRAM-SHA-256".into(), "SCRAM-SHA-256-PLUS".into()],
            }),
        ),
        (
            frame(b'R', b"\0\0\0\x0br=abc,s=xyz,i=4096"),
            Message::Authentication(Authentication::SaslContinue(Bytes::from_static(
                b"r=abc,s=xyz,i=4096",
            ))),
        ),
        (
            frame(b'R', b"\0\0\0\x0cv=sig"),
            Message::Authentication(Authentication::SaslFinal(Bytes::from_static(b"v=sig"))),
        ),
        (
            frame(b'R', &7i32.to_be_bytes()),
            Message::Authentication(Authentication::Unsupported(7)),
        ),
        (
            frame(b'K', &[0, 0, 0, 9, 0xff, 0xff, 0xff, 0xfe]),
            Message::BackendKeyData {
                process_id: 9,
                secret_key: -2,
            },
        ),
        (frame(b'1', b""), Message::ParseComplete),
        (frame(b'2', b""), Message::BindComplete),
        (frame(b'3', b""), Message::CloseComplete),
        (frame(b'n', b""), Message::NoData),
        (frame(b's', b""), Message::PortalSuspended),
        (frame(b'I', b""), Message::EmptyQueryResponse),
        (frame(b'c', b""), Message::CopyDone),
        (
            frame(b'C', b"INSERT 0 5\0"),
            Message::CommandComplete("INSERT 0 5".into()),
        ),
        (
            frame(b'G', &[0, 0, 2, 0, 0, 0, 0]),
            Message::CopyInResponse(CopyResponse {
                format: 0,
                column_formats: vec![0, 0],
            }),
        ),
        (
            frame(b'H', &[1, 0, 1, 0, 1]),
            Message::CopyOutResponse(CopyResponse {
                format: 1,
                column_formats: vec![1],
            }),
        ),
        (
            frame(b'W', &[0, 0, 0]),
            Message::CopyBothResponse(CopyResponse {
                format: 0,
                column_formats: vec![],
            }),
        ),
        (
            frame(b'd', b"\xff\xff\xff\xff"),
            Message::CopyData(Bytes::from_static(b"\xff\xff\xff\xff")),
        ),
        (
            frame(b'D', &row),
            Message::DataRows(
                row_block::take(
                    &mut BytesMut::from(&frame(b'D', &row)[..]),
                    &Limits::default(),
                )
                .unwrap(),
            ),
        ),
        (frame(b'E', err_body), Message::ErrorResponse(Box::new(err))),
        (
            frame(b'N', b"SNOTICE\0Mhello\0\0"),
            Message::NoticeResponse(Box::new(notice)),
        ),
        (
            frame(b'A', b"\0\0\0\x05chan\0payload\0"),
            Message::NotificationResponse {
                process_id: 5,
                channel: "chan".into(),
                payload: "payload".into(),
            },
        ),
        (
            frame(b't', &[0, 2, 0, 0, 0, 23, 0, 0, 0, 25]),
            Message::ParameterDescription(vec![23, 25]),
        ),
        (
            frame(b'S', b"server_version\x009.1.0\0"),
            Message::ParameterStatus {
                name: "server_version".into(),
                value: "9.1.0".into(),
            },
        ),
        (
            frame(b'Z', b"I"),
            Message::ReadyForQuery(TransactionStatus::Idle),
        ),
        (
            frame(b'Z', b"T"),
            Message::ReadyForQuery(TransactionStatus::InTransaction),
        ),
        (
            frame(b'Z', b"E"),
            Message::ReadyForQuery(TransactionStatus::Failed),
        ),
        (
            frame(b'T', &row_desc),
            Message::RowDescription(vec![field("id", 23), field("name", 25)]),
        ),
        (
            frame(b'v', b"\0\0\0\0\0\0\0\x01_pq_.x\0"),
            Message::NegotiateProtocolVersion {
                newest_minor: 0,
                unrecognized: vec!["_pq_.x".into()],
            },
        ),
    ]
}

#[test]
fn every_message_parses() {
    for (bytes, want) in corpus() {
        assert_eq!(parse_all(&bytes).unwrap(), vec![want]);
    }
}

#[test]
fn every_split_point_needs_more_then_parses() {
    let all: Vec<u8> = corpus().into_iter().flat_map(|(b, _)| b).collect();
    let want: Vec<Message> = corpus().into_iter().map(|(_, m)| m).collect();
    for split in 0..all.len() {
        let mut buf = BytesMut::from(&all[..split]);
        let mut got = Vec::new();
        while let Some(m) = parse(&mut buf, &Limits::default()).unwrap() {
            got.push(m);
        }
        buf.put_slice(&all[split..]);
        while let Some(m) = parse(&mut buf, &Limits::default()).unwrap() {
            got.push(m);
        }
        assert_eq!(got, want, "split at {split}");
        assert!(buf.is_empty());
    }
}

#[test]
fn data_rows_arrive_as_one_block() {
    let mut bytes = frame(b'D', &data_row(&[Some(b"abc"), None, Some(b"")]));
    bytes.extend(frame(b'D', &data_row(&[None, Some(b"x"), None])));
    let msgs = parse_all(&bytes).unwrap();
    let [Message::DataRows(block)] = &msgs[..] else {
        panic!("not one block: {msgs:?}")
    };
    assert_eq!((block.len(), block.columns()), (2, 3));
    let values: Vec<_> = block
        .index_all()
        .into_iter()
        .map(|s| block.value(s).unwrap())
        .collect();
    let want: [Option<&[u8]>; 6] = [Some(b"abc"), None, Some(b""), None, Some(b"x"), None];
    assert_eq!(values, want);
}

#[test]
fn truncated_data_row_is_an_error_not_a_panic() {
    // Declares 2 fields, carries one field whose length overruns: framed
    // fine, refused when the row is indexed (and never read past).
    let msgs = parse_all(&frame(b'D', &[0u8, 2, 0, 0, 0, 9, b'x'])).unwrap();
    let [Message::DataRows(block)] = &msgs[..] else {
        panic!("not one block: {msgs:?}")
    };
    let err = block
        .index_row(0, &mut [FieldSpan::default(); 2])
        .unwrap_err();
    assert_eq!(err.kind(), crate::error::ErrorKind::Protocol);
    assert_eq!(block.value(block.index_all()[0]), None);
    // A DataRow shorter than its field count fails as it is taken.
    assert!(parse_all(&frame(b'D', &[0])).is_err());
}

#[test]
fn malformed_frames_are_protocol_errors() {
    let cases: Vec<Vec<u8>> = vec![
        vec![b'Z', 0, 0, 0, 3],             // length < 4
        vec![b'Z', 0xff, 0xff, 0xff, 0xff], // negative length
        frame(b'Z', b"Q"),                  // unknown status
        frame(b'Z', b""),                   // truncated
        frame(b'Z', b"II"),                 // trailing bytes
        frame(b'?', b""),                   // unknown tag
        frame(b'C', b"no terminator"),      // missing NUL
        frame(b'K', &[0, 0, 0, 1]),         // truncated
        frame(b'T', &[0, 1, b'x']),         // truncated field
        frame(b'R', &[0, 0, 0, 5, 1]),      // short salt
        frame(b'E', b"Mmsg\0"),             // missing terminator
        frame(b'G', &[0, 0, 3, 0, 0]),      // fewer formats than declared
    ];
    for (i, bytes) in cases.iter().enumerate() {
        let err = parse_all(bytes).expect_err(&format!("case {i} should fail"));
        assert_eq!(
            err.kind(),
            crate::error::ErrorKind::Protocol,
            "case {i}: {err}"
        );
    }
}

#[test]
fn declared_length_over_limits_is_rejected_before_buffering() {
    let limits = Limits {
        max_control_message: 16,
        max_data_message: 32,
    };
    // Only the header has arrived: the length alone must be enough to reject.
    let mut buf = BytesMut::from(&[b'C', 0, 0, 0, 100][..]);
    assert!(parse(&mut buf, &limits).is_err());
    let mut buf = BytesMut::from(&[b'D', 0, 0, 0, 30][..]);
    assert!(
        parse(&mut buf, &limits).unwrap().is_none(),
        "data under its limit waits"
    );
    let mut buf = BytesMut::from(&[b'D', 0, 0, 0, 40][..]);
    assert!(parse(&mut buf, &limits).is_err());
    // A huge declared count inside a small message cannot force a huge allocation.
    let mut t = vec![0xff, 0xff];
    t.extend_from_slice(b"x");
    assert!(parse_all(&frame(b'T', &t)).is_err());
}
