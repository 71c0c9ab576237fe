use counts::{parse, total};

#[test]
fn api_error_message_names_the_input() {
    assert_eq!(parse(""), Err("empty input".to_string()));
}

#[test]
fn api_total_of_failed_inputs() {
    assert_eq!(total(&["2", "3"]), Some(6));
}

#[test]
fn api_no_panic_on_large() {
    assert_eq!(parse("18446744073709551615"), Ok(u64::MAX));
}
