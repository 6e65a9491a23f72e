use super::*;

fn status(completion: CompletionStatus, chunks: u64, rows: u64) -> QueryStatus {
    QueryStatus {
        query_id: "q1".into(),
        completion_status: completion.into(),
        chunk_count: chunks,
        row_count: rows,
        ..QueryStatus::default()
    }
}

/// The measured SYNC exchange: status, schema, batches, final status.
#[test]
fn sync_reads_only_the_execute_stream() {
    let mut p = Progress::new(TransferMode::Sync);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 0, 0));
    assert_eq!(p.query_id.as_deref(), Some("q1"));
    p.on_part(0, true);
    p.on_part(7, true);
    p.on_part(3, true);
    p.on_status(&status(CompletionStatus::ResultsProduced, 1, 10));
    assert_eq!(p.execute_ended().expect("ok"), Next::Done);
    assert_eq!(p.row_count(), Some(10));
}

/// ADAPTIVE with a large result: chunk 0 inline, the rest fetched, also
/// while the query still runs.
#[test]
fn adaptive_fetches_from_chunk_one() {
    let mut p = Progress::new(TransferMode::Adaptive);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 0, 0));
    p.on_part(0, true);
    p.on_part(100, true);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 1, 100));
    assert_eq!(p.execute_ended().expect("ok"), Next::Poll);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 2, 200));
    assert!(p.has_news());
    let fetch = Next::Fetch {
        chunk: 1,
        omit_schema: true,
    };
    assert_eq!(p.next().expect("ok"), fetch);
    p.on_part(100, false);
    assert_eq!(p.chunk_ended().expect("ok"), Next::Poll);
    p.on_status(&status(CompletionStatus::Finished, 3, 250));
    assert!(p.has_news());
    let fetch = Next::Fetch {
        chunk: 2,
        omit_schema: true,
    };
    assert_eq!(p.next().expect("ok"), fetch);
    p.on_part(50, false);
    assert_eq!(p.chunk_ended().expect("ok"), Next::Done);
    assert_eq!(p.row_count(), Some(250));
}

/// ADAPTIVE with everything inline ends without another call.
#[test]
fn adaptive_small_result_is_done_inline() {
    let mut p = Progress::new(TransferMode::Adaptive);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 0, 0));
    p.on_part(0, true);
    p.on_part(1, true);
    p.on_status(&status(CompletionStatus::ResultsProduced, 1, 1));
    assert_eq!(p.execute_ended().expect("ok"), Next::Done);
}

/// ASYNC: only the schema inline; every chunk fetched from 0.
#[test]
fn async_fetches_every_chunk() {
    let mut p = Progress::new(TransferMode::Async);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 0, 0));
    p.on_part(0, true);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 0, 0));
    assert_eq!(p.execute_ended().expect("ok"), Next::Poll);
    assert!(!p.has_news());
    p.on_status(&status(CompletionStatus::Finished, 2, 20));
    let fetch = |chunk| Next::Fetch {
        chunk,
        omit_schema: true,
    };
    assert_eq!(p.next().expect("ok"), fetch(0));
    p.on_part(10, false);
    assert_eq!(p.chunk_ended().expect("ok"), fetch(1));
    p.on_part(10, false);
    assert_eq!(p.chunk_ended().expect("ok"), Next::Done);
}

/// Without a schema inline the first chunk is fetched with it.
#[test]
fn schema_is_requested_when_missing() {
    let mut p = Progress::new(TransferMode::Async);
    p.on_status(&status(CompletionStatus::Finished, 1, 5));
    assert_eq!(
        p.execute_ended().expect("ok"),
        Next::Fetch {
            chunk: 0,
            omit_schema: false
        }
    );
}

/// Rows missing at the end are an error, not a short result.
#[test]
fn row_count_mismatch_is_an_error() {
    let mut p = Progress::new(TransferMode::Sync);
    p.on_status(&status(CompletionStatus::RunningOrUnspecified, 0, 0));
    p.on_part(0, true);
    p.on_part(5, true);
    p.on_status(&status(CompletionStatus::Finished, 1, 6));
    let e = p.execute_ended().expect_err("mismatch");
    assert_eq!(e.kind(), crate::error::ErrorKind::Protocol);
    assert!(e.to_string().contains("reported 6 rows"), "{e}");
}
