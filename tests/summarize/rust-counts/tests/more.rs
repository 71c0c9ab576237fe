#[test]
fn more_error_free() {
    assert_eq!(counts::parse("1"), Ok(1));
}
