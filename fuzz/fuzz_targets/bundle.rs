#![no_main]

use warden_fuzz::bundle_statement::{Statement, parse_key, parse_signature};

// A bundle's statement, its key and its signature file from any bytes: no
// panic; a statement read is one that reads back as itself.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = parse_signature(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse_key(text);
    }
    if let Ok(statement) = Statement::parse(data) {
        let _ = parse_key(&statement.publisher_key);
        let again = serde_json::to_vec(&statement).unwrap();
        assert_eq!(Statement::parse(&again).unwrap(), statement);
    }
});
