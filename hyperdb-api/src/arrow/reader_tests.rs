use super::*;

#[test]
fn copy_statement() {
    assert_eq!(
        copy_out_sql("SELECT 1 ; \n"),
        "COPY (SELECT 1\n) TO STDOUT WITH (FORMAT ARROWSTREAM)"
    );
}
