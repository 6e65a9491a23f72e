//! Compile-fail tests: each mistake a user will make with the derives is
//! a compile error that says what is wrong, at the token that is wrong.
//! The `.stderr` files are rustc's output as the installed toolchain
//! prints it; regenerate them with `TRYBUILD=overwrite` after a toolchain
//! change, and read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/pass/*.rs");
}
