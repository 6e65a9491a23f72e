#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hyperdb_api_fuzz::scram::check(data));
