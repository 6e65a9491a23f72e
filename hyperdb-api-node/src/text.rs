//! A batch's text column as one JS string, made on the JS thread straight
//! from the bytes where they were received, without a copy in Rust.
//!
//! Why: a 10K-row read of 64 KB values (655 MB of text) spent, besides
//! hyperd's work, a UTF-8 check of every byte (`from_utf8`; Arrow had
//! checked them when it read the batch), a copy into a `String` (fresh
//! pages for each batch: `clear_page` was a fifth of the worker's
//! samples), V8's UTF-8 decoder over the copy, and V8's own copy into a
//! fresh large-object page. ASCII text, the common case, is Latin-1 as it
//! is: a large one becomes an external string over the received bytes
//! (no copy at all), a small one a copy without decoding.

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::OnceLock;

use arrow_buffer::Buffer;
use napi::bindgen_prelude::ToNapiValue;
use napi::{check_status, sys};

use crate::handover::js_array;

/// Text from this size on is handed over as an external string rather
/// than copied: below it, a copy costs less than the weak handle and the
/// finalizer V8 keeps for an external string (as `COPIED_REGION_MAX` for
/// buffers).
const EXTERNAL_MIN: usize = 64 * 1024;

/// One batch's values of a text column, back to back, valid UTF-8 (an
/// Arrow `Utf8` array holds nothing else).
pub(crate) struct Text {
    bytes: Buffer,
    ascii: bool,
}

impl Text {
    /// `bytes` as they are; [`Text::is_ascii`] says how JS will count them.
    pub(crate) fn new(bytes: Buffer) -> Text {
        let ascii = bytes.is_ascii();
        Text { bytes, ascii }
    }

    /// Whether every byte is ASCII: then a value's byte offsets are its
    /// UTF-16 offsets too.
    pub(crate) fn is_ascii(&self) -> bool {
        self.ascii
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The JS string of these bytes.
    ///
    /// # Safety
    /// `env` is the env napi passes to a conversion, on the JS thread.
    unsafe fn to_js(&self, env: sys::napi_env) -> napi::Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        let (data, len) = (self.bytes.as_ptr().cast::<c_char>(), self.bytes.len());
        let length = isize::try_from(len)
            .map_err(|_| napi::Error::from_reason("a text column longer than isize::MAX"))?;
        if self.ascii && len >= EXTERNAL_MIN {
            if let Some(create) = external_latin1() {
                // The finalizer's hint: a handle on the bytes, which keeps
                // them alive and unchanged (Arrow buffers are immutable)
                // until V8 lets the string go.
                let owner = Box::into_raw(Box::new(self.bytes.clone())).cast::<c_void>();
                // Counted before: a string whose bytes Node copied is
                // finalized (and uncounted) before `create` returns.
                // SAFETY: as the caller promises.
                unsafe { weigh_external(env, len as i64) };
                let mut copied = false;
                // SAFETY: as the caller promises; `create` is Node-API's
                // function of this signature (see `external_latin1`).
                // `data` points at `length` ASCII (so Latin-1) bytes that
                // `owner` keeps alive until `drop_owner` runs, which Node
                // calls once: when the string is collected, or at once if
                // it copied them. A failed call may or may not have taken
                // `owner`, so it is left alone then (leaked, not freed
                // twice) and the text copied.
                let status = unsafe {
                    create(
                        env,
                        data,
                        length,
                        Some(drop_owner),
                        owner,
                        &mut out,
                        &mut copied,
                    )
                };
                if status == sys::Status::napi_ok {
                    return Ok(out);
                }
            }
        }
        // SAFETY: as the caller promises; `data` points at `length` bytes
        // that `self` keeps alive for the call, which copies them; `out`
        // is a live local.
        unsafe {
            if self.ascii {
                check_status!(
                    sys::napi_create_string_latin1(env, data, length, &mut out),
                    "a text column"
                )?;
            } else {
                check_status!(
                    sys::napi_create_string_utf8(env, data, length, &mut out),
                    "a text column"
                )?;
            }
        }
        Ok(out)
    }
}

/// `node_api_create_external_string_latin1`'s signature.
type CreateExternalLatin1 = unsafe extern "C" fn(
    sys::napi_env,
    *const c_char,
    isize,
    sys::napi_finalize,
    *mut c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

/// Node's `node_api_create_external_string_latin1`, where it has one
/// (20.4 and later; the package supports 20.0 on, where text is copied).
/// Looked up in the running program rather than linked, so that the
/// addon still loads where it is missing.
fn external_latin1() -> Option<CreateExternalLatin1> {
    static CREATE: OnceLock<Option<CreateExternalLatin1>> = OnceLock::new();
    *CREATE.get_or_init(|| {
        let node = libloading::os::unix::Library::this();
        // SAFETY: the symbol, where present, is Node-API's function of
        // this signature; the program that exports it (node) outlives
        // every call.
        unsafe { node.get::<CreateExternalLatin1>(b"node_api_create_external_string_latin1\0") }
            .ok()
            .map(|f| *f)
    })
}

/// Frees an external string's bytes once V8 has let the string go.
unsafe extern "C" fn drop_owner(env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the `Box<Buffer>` `Text::to_js` gave away for this
    // string, which Node hands back once; `env` is the env Node passes to
    // a finalizer, where adjusting the external memory is allowed.
    unsafe {
        let owner = Box::from_raw(hint.cast::<Buffer>());
        weigh_external(env, -(owner.len() as i64));
    }
}

/// Tells V8 that `change` bytes outside its heap are now held by JS
/// values, or no longer. Why: V8 weighs an external string as its small
/// header only, and a read of large text (whose rows allocate little in
/// V8's young space) left its strings to pile up, uncollected: +625 MB of
/// RSS for each 10K x 64 KB read. Counted, they start a collection as
/// they pass V8's external limit (64 MB).
///
/// # Safety
/// `env` is a live env on the JS thread (a conversion's or a finalizer's).
unsafe fn weigh_external(env: sys::napi_env, change: i64) {
    let mut total = 0;
    // SAFETY: as the caller promises. A failure leaves V8's weighing as
    // it was, which only changes when it collects.
    let _ = unsafe { sys::napi_adjust_external_memory(env, change, &mut total) };
}

/// A handover's text columns, handed to JavaScript as an array of strings.
pub struct Texts(pub(crate) Vec<Text>);

impl ToNapiValue for Texts {
    unsafe fn to_napi_value(env: sys::napi_env, val: Texts) -> napi::Result<sys::napi_value> {
        // SAFETY: `env` is the live env napi passes to this conversion, on
        // the JS thread.
        unsafe { js_array(env, val.0, "a handover's text", |text| text.to_js(env)) }
    }
}
