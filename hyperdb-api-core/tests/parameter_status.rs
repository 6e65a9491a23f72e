//! A hostile server's `ParameterStatus` flood: the memory a session keeps
//! for the parameters stays bounded however many distinct names arrive.
//!
//! Its own test binary, because it counts every allocation of the process
//! through a global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use bytes::BufMut;
use hyperdb_api_core::protocol::{Limits, Session};

/// Counts the bytes currently allocated, then hands over to the system.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counter has
// no say in the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Held by each test while it measures: the counter is process-wide.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn push_status(s: &mut Session, name: &[u8], value: &[u8]) {
    let b = s.read_buf();
    b.put_u8(b'S');
    b.put_i32((4 + name.len() + 1 + value.len() + 1) as i32);
    b.put_slice(name);
    b.put_u8(0);
    b.put_slice(value);
    b.put_u8(0);
}

/// Reads everything queued: parameter statuses are consumed by the
/// session and never handed out.
fn drain(s: &mut Session) {
    assert!(s.next_message().expect("well-framed").is_none());
    assert!(s.read_buf().is_empty());
}

/// 1.5M distinct names (the report: +306 MiB before the cap), fed the way a
/// driver would, a window at a time. What the session holds afterwards
/// stays under 2 MiB, the names it knew keep their values, and a known
/// name is still updated.
#[test]
fn a_flood_of_distinct_parameter_names_keeps_memory_bounded() {
    let _measuring = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Session::new(Limits::default(), None);
    push_status(&mut s, b"server_version", b"9.1.0");
    drain(&mut s);
    let before = LIVE.load(Ordering::Relaxed);
    const FLOOD: usize = 1_500_000;
    const BATCH: usize = 10_000;
    let mut name = Vec::with_capacity(32);
    for batch in 0..FLOOD / BATCH {
        for i in 0..BATCH {
            name.clear();
            name.extend_from_slice(format!("flood_{batch}_{i}").as_bytes());
            push_status(&mut s, &name, b"some value");
        }
        drain(&mut s);
    }
    let grown = LIVE.load(Ordering::Relaxed) - before;
    eprintln!("{FLOOD} distinct ParameterStatus names: heap grew by {grown} bytes");
    assert!(grown < 2 << 20, "heap grew by {grown} bytes");
    assert_eq!(s.parameter("server_version"), Some("9.1.0"));
    push_status(&mut s, b"server_version", b"9.2.0");
    drain(&mut s);
    assert_eq!(s.parameter("server_version"), Some("9.2.0"));
}

/// Huge names and values (up to the 1 MiB control-message cap each) are
/// not kept either: 300 of them would otherwise hold 300 MiB.
#[test]
fn oversized_parameters_are_not_kept() {
    let _measuring = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Session::new(Limits::default(), None);
    let before = LIVE.load(Ordering::Relaxed);
    let big = vec![b'x'; 512 * 1024];
    for i in 0..300 {
        push_status(&mut s, format!("big_value_{i}").as_bytes(), &big);
        drain(&mut s);
        let mut name = big.clone();
        name.extend_from_slice(i.to_string().as_bytes());
        push_status(&mut s, &name, b"v");
        drain(&mut s);
    }
    let grown = LIVE.load(Ordering::Relaxed) - before;
    eprintln!("300 oversized names and values: heap grew by {grown} bytes");
    // The receive buffer keeps the largest message's capacity (~1 MiB).
    assert!(grown < 4 << 20, "heap grew by {grown} bytes");
    assert_eq!(s.parameter("big_value_0"), None);
}
