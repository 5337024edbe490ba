#![no_main]

use warden_fuzz::manifest::Manifest;

// The manifest reader on any bytes: a component (or not) and a section's
// JSON. No panic; a manifest read is one that reads back as itself.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = Manifest::read(data);
    if let Ok(manifest) = Manifest::parse(data) {
        let again = serde_json::to_vec(&manifest).unwrap();
        assert_eq!(Manifest::parse(&again).unwrap(), manifest);
    }
});
